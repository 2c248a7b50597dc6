"""The model server behind ``/v1/chat/completions``: one pooled client, the headers it is
sent, and nothing of the caller's key in any log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from recap_memory.errors import ConfigurationError

FORWARDED = ("accept", "openai-organization", "openai-project", "user-agent")
"""Request headers passed on as they came (besides the key)."""
RETURNED = ("content-type", "openai-processing-ms", "x-request-id", "retry-after")
"""Response headers passed back to the caller."""


class Upstream:
    """An OpenAI-compatible ``/v1`` base URL and the key to call it with."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        pass_caller_key: bool,
        timeout_s: float,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.api_key = api_key
        self.pass_caller_key = pass_caller_key
        self.client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            transport=transport,
            trust_env=False,
        )

    def headers(self, caller: Mapping[str, str]) -> dict[str, str]:
        """The headers of the upstream request made for a caller's request."""
        headers = {name: caller[name] for name in FORWARDED if name in caller}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        elif self.pass_caller_key and "authorization" in caller:
            headers["authorization"] = caller["authorization"]
        return headers

    async def send(
        self, method: str, path: str, caller: Mapping[str, str], body: Any = None
    ) -> httpx.Response:
        """Send a request and return the response with its body still unread (stream it,
        or ``await response.aread()``); the caller closes it."""
        request = self.client.build_request(method, path, json=body, headers=self.headers(caller))
        return await self.client.send(request, stream=True)

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self.client.aclose()


def returned_headers(response: httpx.Response) -> dict[str, str]:
    """The upstream response's headers a caller gets back."""
    return {name: response.headers[name] for name in RETURNED if name in response.headers}


class NoUpstream(ConfigurationError):
    """A proxy route was called while no upstream model is configured."""

    def __init__(self) -> None:
        super().__init__(
            "no upstream model: set RECAP_UPSTREAM_URL to an OpenAI-compatible /v1 base "
            "(e.g. http://127.0.0.1:11434/v1) to use /v1/chat/completions and /v1/models"
        )
