"""Compaction events, published to whoever listens on a session (the SSE stream).

Every subscriber gets its own bounded queue; a slow subscriber loses its
oldest events, never blocks a compaction. Closing the bus (the server shutting
down) ends every subscription, so that open streams finish instead of holding
the shutdown up. With a relay (PostgreSQL), a
published event goes out through the database and comes back to every
process's bus, this one included (see :mod:`recap_memory.service.relay`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger("recap_memory.service")

QUEUE_SIZE = 256


@dataclass(frozen=True)
class Event:
    """One event: ``name`` (``summarization.started`` …) and its JSON data."""

    name: str
    session: str
    data: dict[str, Any] = field(default_factory=dict)


class Relay(Protocol):
    """Carries events to every process (PostgreSQL NOTIFY)."""

    async def send(self, event: Event) -> None:
        """Send ``event`` to every listening process."""


class BusClosed(Exception):
    """The bus was closed: no more events will come."""


_CLOSED = object()
"""Put in a subscriber's queue when the bus closes."""


class Subscription:
    """One subscriber's events, in order: ``await get()`` or ``async for``; both end when
    the bus closes (``get`` raises :class:`BusClosed`, the loop stops)."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[object] = asyncio.Queue(QUEUE_SIZE + 1)

    async def get(self) -> Event:
        """The next event (waiting for it); :class:`BusClosed` once the bus is closed."""
        item = await self._queue.get()
        if item is _CLOSED:
            self._queue.put_nowait(_CLOSED)  # every later get ends too
            raise BusClosed("the event bus is closed: the service is shutting down")
        assert isinstance(item, Event)
        return item

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events()

    async def _events(self) -> AsyncIterator[Event]:
        while True:
            try:
                yield await self.get()
            except BusClosed:
                return

    def _put(self, event: Event) -> None:
        if self._queue.qsize() >= QUEUE_SIZE:
            with contextlib.suppress(asyncio.QueueEmpty):
                self._queue.get_nowait()
        self._queue.put_nowait(event)

    def _close(self) -> None:
        self._queue.put_nowait(_CLOSED)  # room kept: the queue holds QUEUE_SIZE + 1


class EventBus:
    """Per-session fan-out of events to subscribers."""

    def __init__(self, relay: Relay | None = None) -> None:
        self.relay = relay
        self.closed = False
        self._queues: dict[str, set[Subscription]] = defaultdict(set)

    async def publish(self, name: str, session: str, **data: Any) -> Event:
        """Send an event to every subscriber of ``session`` (in every process, with a relay)."""
        event = Event(name, session, {"session_id": session, **data})
        if self.relay is None:
            self.deliver(event)
            return event
        try:
            await self.relay.send(event)
        except Exception as exc:  # the database is down: at least this process hears it
            log.warning("could not relay %s for session %s: %s", name, session, exc)
            self.deliver(event)
        return event

    def deliver(self, event: Event) -> None:
        """Hand ``event`` to this process's subscribers of its session."""
        if self.closed:
            return
        for subscription in list(self._queues.get(event.session, ())):
            subscription._put(event)

    def close(self) -> None:
        """End every subscription, now and to come (the service is shutting down)."""
        if self.closed:
            return
        self.closed = True
        for subscriptions in list(self._queues.values()):
            for subscription in subscriptions:
                subscription._close()

    @contextlib.asynccontextmanager
    async def subscribe(self, session: str) -> AsyncIterator[Subscription]:
        """``session``'s events while the block runs (none once the bus is closed)."""
        subscription = Subscription()
        if self.closed:
            subscription._close()
        self._queues[session].add(subscription)
        try:
            yield subscription
        finally:
            self._queues[session].discard(subscription)
            if not self._queues[session]:
                del self._queues[session]

    def subscribers(self, session: str) -> int:
        """How many listeners ``session`` has."""
        return len(self._queues.get(session, ()))
