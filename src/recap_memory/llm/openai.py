"""OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server, LM Studio, gateways)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from recap_memory.errors import ConfigurationError
from recap_memory.llm.base import ChatTurn, Completion, ModelOptions
from recap_memory.llm.http import HTTPChatModel

OPENAI_URL = "https://api.openai.com/v1"

KNOWN_WINDOWS = {
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
}
"""Context windows of well-known models, matched by prefix (longest first)."""


class OpenAIModel(HTTPChatModel):
    """``POST {base_url}/chat/completions`` with a bearer key when one is given."""

    path = "/chat/completions"
    default_url = OPENAI_URL

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        **options: Any,
    ) -> None:
        """``api_key`` is sent as a bearer token; the OpenAI API itself requires one.
        ``options`` are :class:`HTTPChatModel`'s (timeout, context_window, client)."""
        if api_key is None and (base_url or OPENAI_URL).rstrip("/") == OPENAI_URL:
            raise ConfigurationError(
                "the OpenAI API needs a key: set OPENAI_API_KEY (or RECAP_LLM_API_KEY), "
                "or give --llm-url for a server that needs none"
            )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        super().__init__(model, base_url=base_url, headers=headers, **options)

    def known_window(self, model: str) -> int | None:
        """The window of a well-known OpenAI model (``KNOWN_WINDOWS``, longest prefix first)."""
        for prefix in sorted(KNOWN_WINDOWS, key=len, reverse=True):
            if model.startswith(prefix):
                return KNOWN_WINDOWS[prefix]
        return None

    def payload(self, messages: Sequence[ChatTurn], options: ModelOptions) -> dict[str, Any]:
        """Model, messages, temperature and max_tokens; nothing streamed."""
        return {
            "model": self.model,
            "messages": list(messages),
            "temperature": options.temperature,
            "max_tokens": options.max_tokens,
            "stream": False,
        }

    def parse_chunk(self, line: str) -> str | None:
        """``data: {choices: [{delta: {content}}]}`` lines; ``data: [DONE]`` ends."""
        if not line.startswith("data:"):
            return None
        data = line[5:].strip()
        if data == "[DONE]":
            return None
        choices = json.loads(data)["choices"]
        return str(choices[0].get("delta", {}).get("content") or "") if choices else None

    def parse(self, data: Any) -> Completion:
        """``choices[0].message.content`` and the ``usage`` block."""
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        return Completion(
            choice["message"].get("content") or "",
            data.get("model") or self.model,
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            truncated=choice.get("finish_reason") == "length",
        )
