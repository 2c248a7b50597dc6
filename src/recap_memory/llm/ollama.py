"""Ollama's native ``/api/chat`` (non-streaming), as Design B's utility model uses it.

The chat template is applied by the server; recap sends plain messages. The
context window is sent as ``num_ctx`` so the server really has the room the
summarizer plans for (Ollama's own default is much smaller).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from recap_memory.llm.base import ChatTurn, Completion, ModelOptions
from recap_memory.llm.http import HTTPChatModel

OLLAMA_URL = "http://127.0.0.1:11434"


class OllamaModel(HTTPChatModel):
    """``POST {base_url}/api/chat`` with ``stream: false``."""

    path = "/api/chat"
    default_url = OLLAMA_URL
    default_timeout = 120.0

    def payload(self, messages: Sequence[ChatTurn], options: ModelOptions) -> dict[str, Any]:
        """Model, messages, and temperature / num_predict / num_ctx as options."""
        return {
            "model": self.model,
            "messages": list(messages),
            "stream": False,
            "options": {
                "temperature": options.temperature,
                "num_predict": options.max_tokens,
                "num_ctx": self.context_window,
            },
        }

    def parse_chunk(self, line: str) -> str | None:
        """One JSON object a line: ``{"message": {"content": ...}, "done": false}``."""
        return str(json.loads(line).get("message", {}).get("content") or "")

    def parse(self, data: Any) -> Completion:
        """``message.content``, with ``prompt_eval_count`` / ``eval_count`` as usage."""
        return Completion(
            data["message"]["content"] or "",
            data.get("model") or self.model,
            data.get("prompt_eval_count"),
            data.get("eval_count"),
            truncated=data.get("done_reason") == "length",
        )
