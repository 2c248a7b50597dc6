"""Model backends behind one small interface (see :mod:`recap.llm.base`).

Pick one by spec with :func:`make_model` (``openai:…``, ``ollama:…``,
``llamacpp:…``, ``langchain:…``), or build one directly.
"""

from recap.llm.base import ChatModel, Completion, ModelOptions, Usage
from recap.llm.fake import FakeModel
from recap.llm.langchain import LangChainModel
from recap.llm.llamacpp import LlamaCppModel
from recap.llm.ollama import OllamaModel
from recap.llm.openai import OpenAIModel
from recap.llm.retry import Retrying, RetryPolicy
from recap.llm.spec import ModelSpec, make_model, parse_spec

__all__ = [
    "ChatModel",
    "Completion",
    "FakeModel",
    "LangChainModel",
    "LlamaCppModel",
    "ModelOptions",
    "ModelSpec",
    "OllamaModel",
    "OpenAIModel",
    "RetryPolicy",
    "Retrying",
    "Usage",
    "make_model",
    "parse_spec",
]
