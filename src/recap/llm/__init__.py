"""Model backends behind one small interface (see :mod:`recap.llm.base`)."""

from recap.llm.base import ChatModel, Completion, ModelOptions
from recap.llm.fake import FakeModel

__all__ = ["ChatModel", "Completion", "FakeModel", "ModelOptions"]
