"""The blocking client."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from recap_memory.api_models import (
    Appended,
    CompactOut,
    Context,
    EpisodeStats,
    Event,
    MessagePage,
    SessionOut,
    SessionPage,
    Stats,
    SummaryOut,
)
from recap_memory.client._base import DEFAULT_TIMEOUT_S, DEFAULT_URL, BaseClient
from recap_memory.client._calls import Call, MessageLike, Retry
from recap_memory.client._sse import SSEDecoder
from recap_memory.client.errors import api_error

T = TypeVar("T")


class Client(BaseClient):
    """A blocking client of the recap memory service (``recap serve``), over httpx.

    ``api_key`` is sent as ``Authorization: Bearer``; ``transport`` replaces httpx's
    (tests, proxies). Writes go under an ``Idempotency-Key`` (a new one unless given), so a
    write whose answer was lost (no answer, 503 ``outcome_unknown`` or
    ``database_unavailable``) is sent again as ``retry`` says, and the service answers it
    without writing twice; reads are retried the same way. Errors are
    :class:`~recap_memory.client.errors.RecapAPIError` (with the API's ``code``) or
    :class:`~recap_memory.client.errors.RecapConnectionError`. Use it in a ``with`` block
    or call :meth:`close`.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
        retry: Retry | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout, retry)
        self._http = httpx.Client(transport=transport, **self._http_options)

    def _send(self, call: Call[T]) -> T:
        attempt = 1
        while True:
            try:
                response = self._http.send(call.request(self._http))
            except httpx.TransportError as exc:
                wait = self.retry.wait(call, attempt, error=exc)
                if wait is None:
                    raise self._unreachable(call, attempt, exc) from exc
            else:
                wait = self.retry.wait(call, attempt, response=response)
                if wait is None:
                    return call.answer(response)
            time.sleep(wait)
            attempt += 1

    def create_session(
        self,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> SessionOut:
        """A new, empty session (created once, however often the request is retried)."""
        return self._send(self.calls.create_session(title, metadata, idempotency_key))

    def list_sessions(self, limit: int = 50, offset: int = 0) -> SessionPage:
        """One page of this tenant's sessions, newest first."""
        return self._send(self.calls.list_sessions(limit, offset))

    def get_session(self, session_id: str) -> SessionOut:
        """The session with its sizes and compaction state."""
        return self._send(self.calls.get_session(session_id))

    def delete_session(self, session_id: str) -> None:
        """Delete the session, its messages and summaries."""
        self._send(self.calls.delete_session(session_id))

    def append(
        self,
        session_id: str,
        messages: Iterable[MessageLike],
        idempotency_key: str | None = None,
    ) -> Appended:
        """Append messages (OpenAI chat dicts or :class:`~recap_memory.messages.Message`),
        exactly once: retried under one Idempotency-Key (a new one when not given)."""
        return self._send(self.calls.append(session_id, messages, idempotency_key))

    def messages(self, session_id: str, after: int | None = None, limit: int = 100) -> MessagePage:
        """One page of the raw record: messages after the id ``after``, in order."""
        return self._send(self.calls.messages(session_id, after, limit))

    def iter_messages(self, session_id: str, page_size: int = 100) -> Iterator[dict[str, Any]]:
        """Every message of the raw record, in order, a page at a time."""
        after: int | None = None
        while True:
            page = self.messages(session_id, after=after, limit=page_size)
            yield from page.items
            if page.next_after is None:
                return
            after = page.next_after

    def context(
        self,
        session_id: str,
        compact_sync: bool = False,
        max_chars: int | None = None,
        max_tokens: int | None = None,
    ) -> Context:
        """What to send to the model now. ``compact_sync`` runs a due compaction first;
        ``max_chars`` or ``max_tokens`` is a hard cap (:class:`TooLarge` when it cannot
        be held)."""
        return self._send(self.calls.context(session_id, compact_sync, max_chars, max_tokens))

    def summaries(self, session_id: str, include_superseded: bool = False) -> list[SummaryOut]:
        """The summary chain in order."""
        return self._send(self.calls.summaries(session_id, include_superseded))

    def compact(self, session_id: str) -> CompactOut:
        """Compact now, even under the threshold (never retried by the client)."""
        return self._send(self.calls.compact(session_id))

    def episode_stats(self, session_id: str) -> EpisodeStats:
        """The session's counters: message count, token and char sums, last id."""
        return self._send(self.calls.episode_stats(session_id))

    def stats(self) -> Stats:
        """Compaction and session totals of this tenant."""
        return self._send(self.calls.stats())

    def events(self, session_id: str) -> Generator[Event, None, None]:
        """The session's events as they happen: ``SessionState`` first, then each
        pass's ``SummarizationStarted``, ``SummarizationFinished``… Ends when the service
        shuts down; break out of the loop (or ``close()`` the iterator) to stop listening."""
        call = self.calls.events(session_id)
        try:
            response = self._http.send(call.request(self._http), stream=True)
        except httpx.TransportError as exc:
            raise self._unreachable(call, 1, exc) from exc
        try:
            if response.is_error:
                response.read()
                raise api_error(response)
            decoder = SSEDecoder()
            for line in response.iter_lines():
                event = decoder.feed(line)
                if event is not None:
                    yield event
        except httpx.TransportError as exc:
            raise self._unreachable(call, 1, exc) from exc
        finally:
            response.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
