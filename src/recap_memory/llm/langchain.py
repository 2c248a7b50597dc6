"""Any LangChain chat model (``BaseChatModel.ainvoke``): Design A summarizes with the
agent's own model. Needs ``langchain-core`` (``pip install recap-memory[langchain]``).

Temperature and output length are the LangChain model's own settings (set
them when you build it); recap plans its requests with ``ModelOptions`` all
the same. The context window comes from the model's profile when it has
one, else from ``context_window``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from recap_memory.errors import BackendError, ConfigurationError
from recap_memory.llm.base import ChatModel, ChatTurn, Completion, ModelOptions


class LangChainModel(ChatModel):
    """Wraps a ``langchain_core`` chat model."""

    def __init__(self, chat_model: Any, *, context_window: int | None = None) -> None:
        if not hasattr(chat_model, "ainvoke"):
            raise ConfigurationError(
                f"{type(chat_model).__name__} is not a LangChain chat model (no ainvoke)"
            )
        self.chat_model = chat_model
        self.name = str(
            getattr(chat_model, "model_name", None)
            or getattr(chat_model, "model", None)
            or type(chat_model).__name__
        )
        profile = getattr(chat_model, "profile", None)
        profiled = profile.get("max_input_tokens") if isinstance(profile, dict) else None
        self.context_window = context_window or profiled or 8192

    async def execute(self, messages: Sequence[ChatTurn], options: ModelOptions) -> Completion:
        """``ainvoke`` the model; its exceptions become :class:`BackendError`."""
        from langchain_core.messages import convert_to_messages

        started = time.perf_counter()
        try:
            reply = await self.chat_model.ainvoke(convert_to_messages(list(messages)))
        except TimeoutError as exc:
            raise BackendError(f"{self.name}: timed out", kind="timeout", retryable=True) from exc
        except Exception as exc:
            raise BackendError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        usage = getattr(reply, "usage_metadata", None) or {}
        metadata = getattr(reply, "response_metadata", None) or {}
        stop = (
            metadata.get("finish_reason")
            or metadata.get("stop_reason")
            or metadata.get("done_reason")
        )
        return Completion(
            _text(reply.content),
            str(metadata.get("model_name") or self.name),
            usage.get("input_tokens"),
            usage.get("output_tokens"),
            (time.perf_counter() - started) * 1000,
            truncated=stop in ("length", "max_tokens"),
        )


def _text(content: Any) -> str:
    """The text of a LangChain message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)
