"""OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server, LM Studio, gateways)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from recap.errors import ConfigurationError
from recap.llm.base import ChatTurn, Completion, ModelOptions
from recap.llm.http import HTTPChatModel

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


def known_window(model: str) -> int | None:
    """The context window of a well-known model name, or None."""
    for prefix in sorted(KNOWN_WINDOWS, key=len, reverse=True):
        if model.startswith(prefix):
            return KNOWN_WINDOWS[prefix]
    return None


class OpenAIModel(HTTPChatModel):
    """``POST {base_url}/chat/completions`` with a bearer key when one is given."""

    path = "/chat/completions"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OPENAI_URL,
        api_key: str | None = None,
        timeout: float = 60.0,
        context_window: int | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if api_key is None and base_url.rstrip("/") == OPENAI_URL:
            raise ConfigurationError(
                "the OpenAI API needs a key: set OPENAI_API_KEY (or RECAP_LLM_API_KEY), "
                "or give --llm-url for a server that needs none"
            )
        super().__init__(
            model,
            base_url=base_url,
            timeout=timeout,
            context_window=context_window or known_window(model) or 8192,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else None,
            client=client,
        )

    def payload(self, messages: Sequence[ChatTurn], options: ModelOptions) -> dict[str, Any]:
        """Model, messages, temperature and max_tokens; nothing streamed."""
        return {
            "model": self.model,
            "messages": list(messages),
            "temperature": options.temperature,
            "max_tokens": options.max_tokens,
            "stream": False,
        }

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
