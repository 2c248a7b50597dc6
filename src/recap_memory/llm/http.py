"""What every HTTP backend shares: one JSON POST, and failures turned into
:class:`~recap_memory.errors.BackendError` with a kind, a retry hint and advice.

A subclass says where to post (:attr:`HTTPChatModel.path`), what to send
(:meth:`HTTPChatModel.payload`) and how to read the answer
(:meth:`HTTPChatModel.parse`).
"""

from __future__ import annotations

import contextlib
import email.utils
import time
from abc import abstractmethod
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import httpx

from recap_memory.errors import BackendError, ConfigurationError, ContextOverflowError
from recap_memory.llm.base import ChatModel, ChatTurn, Completion, ModelOptions

_OVERFLOW_HINTS = ("context length", "context window", "maximum context", "too many tokens")


class HTTPChatModel(ChatModel):
    """A chat model reached over HTTP with JSON bodies."""

    path: str = ""
    default_url: str = ""
    default_timeout: float = 60.0

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float | None = None,
        context_window: int | None = None,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        """``base_url``, ``timeout`` and ``context_window`` default per backend (8192 tokens
        where the model's window is not known)."""
        base_url = base_url or self.default_url
        timeout = timeout or self.default_timeout
        context_window = context_window or self.known_window(model) or 8192
        if not model:
            raise ConfigurationError("a model name is needed, e.g. ollama:qwen2.5:3b")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(f"base URL {base_url!r} must start with http:// or https://")
        if timeout <= 0 or context_window <= 0:
            raise ConfigurationError("timeout and context_window must be positive")
        self.model = model
        self.name = model
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.context_window = context_window
        self.headers = dict(headers or {})
        self.client = client

    def known_window(self, model: str) -> int | None:
        """The context window of a well-known model name, or None."""
        return None

    @property
    def url(self) -> str:
        """The endpoint requests go to."""
        return self.base_url + self.path

    @abstractmethod
    def payload(self, messages: Sequence[ChatTurn], options: ModelOptions) -> dict[str, Any]:
        """The JSON body of one request."""

    @abstractmethod
    def parse(self, data: Any) -> Completion:
        """The completion in a response body (raise ``KeyError``/``TypeError`` if malformed)."""

    def parse_chunk(self, line: str) -> str | None:
        """The text in one line of a streamed answer (None: nothing to show). Backends
        that stream override it; this one streams nothing."""
        raise NotImplementedError

    async def stream(
        self, messages: Sequence[ChatTurn], options: ModelOptions
    ) -> AsyncIterator[str]:
        """POST with ``stream: true`` and yield the pieces as they arrive."""
        body = {**self.payload(messages, options), "stream": True}
        async with contextlib.AsyncExitStack() as stack:
            client = self.client
            if client is None:
                client = await stack.enter_async_context(httpx.AsyncClient(timeout=self.timeout))
            with self._translated():
                response = await stack.enter_async_context(
                    client.stream(
                        "POST", self.url, json=body, headers=self.headers, timeout=self.timeout
                    )
                )
                if response.status_code >= 400:
                    await response.aread()
                    raise _status_error(self.name, self.url, response)
                async for line in response.aiter_lines():
                    try:
                        piece = self.parse_chunk(line) if line.strip() else None
                    except (ValueError, KeyError, IndexError, TypeError) as exc:
                        raise BackendError(
                            f"{self.name}: unreadable stream line from {self.url}: {line[:200]!r}",
                            kind="malformed",
                        ) from exc
                    if piece:
                        yield piece

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """httpx's timeouts and transport failures as :class:`BackendError`."""
        try:
            yield
        except httpx.TimeoutException as exc:
            raise BackendError(
                f"{self.name}: no answer from {self.url} within {self.timeout:g}s "
                f"({type(exc).__name__}); raise the timeout or check the server",
                kind="timeout",
                retryable=True,
            ) from exc
        except httpx.TransportError as exc:
            raise BackendError(
                f"{self.name}: could not talk to {self.url} ({type(exc).__name__}: {exc}); "
                "is the server running and the URL right?",
                kind="connection",
                retryable=True,
            ) from exc

    async def execute(self, messages: Sequence[ChatTurn], options: ModelOptions) -> Completion:
        """POST the request and read the answer; failures raise :class:`BackendError`."""
        started = time.perf_counter()
        data = await self._post(self.payload(messages, options))
        try:
            completion = self.parse(data)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise BackendError(
                f"{self.name}: unexpected response shape from {self.url} (missing {exc}): "
                f"{str(data)[:200]}",
                kind="malformed",
                retryable=True,
            ) from exc
        elapsed = (time.perf_counter() - started) * 1000
        return Completion(
            completion.text,
            completion.model or self.model,
            completion.prompt_tokens,
            completion.completion_tokens,
            elapsed,
            truncated=completion.truncated,
        )

    async def _post(self, body: dict[str, Any]) -> Any:
        with self._translated():
            if self.client is not None:
                response = await self.client.post(
                    self.url, json=body, headers=self.headers, timeout=self.timeout
                )
            else:
                async with httpx.AsyncClient(timeout=self.timeout) as client:
                    response = await client.post(self.url, json=body, headers=self.headers)
        if response.status_code >= 400:
            raise _status_error(self.name, self.url, response)
        try:
            return response.json()
        except ValueError as exc:
            raise BackendError(
                f"{self.name}: {self.url} answered with invalid JSON: {response.text[:200]!r}",
                kind="malformed",
                retryable=True,
            ) from exc


def _status_error(name: str, url: str, response: httpx.Response) -> BackendError:
    """The error for an HTTP error status, with what to do about it."""
    status = response.status_code
    detail = _error_detail(response)
    where = f"{name}: {url} answered {status}"
    if status == 429:
        return BackendError(
            f"{where} (rate limited): {detail}",
            kind="rate_limit",
            retryable=True,
            retry_after=retry_after(response.headers.get("retry-after")),
            status=status,
        )
    if status in (400, 413) and any(h in detail.lower() for h in _OVERFLOW_HINTS):
        return ContextOverflowError(f"{where}: {detail}", status=status)
    if status in (401, 403):
        advice = "check the API key (RECAP_LLM_API_KEY or OPENAI_API_KEY)"
    elif status == 404:
        advice = "check the model name and the base URL"
    else:
        advice = "the server failed; it will be retried" if status >= 500 else "request refused"
    return BackendError(
        f"{where}: {detail} — {advice}",
        kind="http",
        retryable=status >= 500 or status == 408,
        retry_after=retry_after(response.headers.get("retry-after")) if status == 503 else None,
        status=status,
    )


def _error_detail(response: httpx.Response) -> str:
    """The server's own error message when it sent one, else the start of the body."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return str(error if error else data)[:200]


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
