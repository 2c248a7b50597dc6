"""The asyncio client: :class:`~recap_memory.client.Client`'s calls, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
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


class AsyncClient(BaseClient):
    """An asyncio client of the recap memory service: the same methods, settings, retries
    and errors as :class:`~recap_memory.client.Client`, each awaited (:meth:`events` and
    :meth:`iter_messages` are async iterators). Use it in an ``async with`` block or call
    :meth:`aclose`."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: Retry | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout, retry)
        self._http = httpx.AsyncClient(transport=transport, **self._http_options)

    async def _send(self, call: Call[T]) -> T:
        attempt = 1
        while True:
            try:
                response = await self._http.send(call.request(self._http))
            except httpx.TransportError as exc:
                wait = self.retry.wait(call, attempt, error=exc)
                if wait is None:
                    raise self._unreachable(call, attempt, exc) from exc
            else:
                wait = self.retry.wait(call, attempt, response=response)
                if wait is None:
                    return call.answer(response)
            await asyncio.sleep(wait)
            attempt += 1

    async def create_session(
        self,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> SessionOut:
        """See :meth:`Client.create_session`."""
        return await self._send(self.calls.create_session(title, metadata, idempotency_key))

    async def list_sessions(self, limit: int = 50, offset: int = 0) -> SessionPage:
        """See :meth:`Client.list_sessions`."""
        return await self._send(self.calls.list_sessions(limit, offset))

    async def get_session(self, session_id: str) -> SessionOut:
        """See :meth:`Client.get_session`."""
        return await self._send(self.calls.get_session(session_id))

    async def delete_session(self, session_id: str) -> None:
        """See :meth:`Client.delete_session`."""
        await self._send(self.calls.delete_session(session_id))

    async def append(
        self,
        session_id: str,
        messages: Iterable[MessageLike],
        idempotency_key: str | None = None,
    ) -> Appended:
        """See :meth:`Client.append`."""
        return await self._send(self.calls.append(session_id, messages, idempotency_key))

    async def messages(
        self, session_id: str, after: int | None = None, limit: int = 100
    ) -> MessagePage:
        """See :meth:`Client.messages`."""
        return await self._send(self.calls.messages(session_id, after, limit))

    async def iter_messages(
        self, session_id: str, page_size: int = 100
    ) -> AsyncIterator[dict[str, Any]]:
        """See :meth:`Client.iter_messages`."""
        after: int | None = None
        while True:
            page = await self.messages(session_id, after=after, limit=page_size)
            for item in page.items:
                yield item
            if page.next_after is None:
                return
            after = page.next_after

    async def context(
        self,
        session_id: str,
        compact_sync: bool = False,
        max_chars: int | None = None,
        max_tokens: int | None = None,
    ) -> Context:
        """See :meth:`Client.context`."""
        call = self.calls.context(session_id, compact_sync, max_chars, max_tokens)
        return await self._send(call)

    async def summaries(
        self, session_id: str, include_superseded: bool = False
    ) -> list[SummaryOut]:
        """See :meth:`Client.summaries`."""
        return await self._send(self.calls.summaries(session_id, include_superseded))

    async def compact(self, session_id: str) -> CompactOut:
        """See :meth:`Client.compact`."""
        return await self._send(self.calls.compact(session_id))

    async def episode_stats(self, session_id: str) -> EpisodeStats:
        """See :meth:`Client.episode_stats`."""
        return await self._send(self.calls.episode_stats(session_id))

    async def stats(self) -> Stats:
        """See :meth:`Client.stats`."""
        return await self._send(self.calls.stats())

    async def events(self, session_id: str) -> AsyncGenerator[Event, None]:
        """See :meth:`Client.events` (``aclose()`` the iterator to stop listening)."""
        call = self.calls.events(session_id)
        try:
            response = await self._http.send(call.request(self._http), stream=True)
        except httpx.TransportError as exc:
            raise self._unreachable(call, 1, exc) from exc
        try:
            if response.is_error:
                await response.aread()
                raise api_error(response)
            decoder = SSEDecoder()
            async for line in response.aiter_lines():
                event = decoder.feed(line)
                if event is not None:
                    yield event
        except httpx.TransportError as exc:
            raise self._unreachable(call, 1, exc) from exc
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
