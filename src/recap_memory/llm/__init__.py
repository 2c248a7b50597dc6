"""Model backends behind one small interface (see :mod:`recap_memory.llm.base`).

Pick one by spec with :func:`make_model` (``openai:…``, ``ollama:…``,
``llamacpp:…``, ``langchain:…``), or build one directly.
"""

from recap_memory.llm.base import ChatModel, Completion, ModelOptions, Usage
from recap_memory.llm.fake import FakeModel
from recap_memory.llm.langchain import LangChainModel
from recap_memory.llm.llamacpp import LlamaCppModel
from recap_memory.llm.ollama import OllamaModel
from recap_memory.llm.openai import OpenAIModel
from recap_memory.llm.retry import Retrying, RetryPolicy
from recap_memory.llm.spec import ModelSpec, make_model, parse_spec

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
