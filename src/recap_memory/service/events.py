"""Compaction events, published to whoever listens on a session (the SSE stream).

Every subscriber gets its own bounded queue; a slow subscriber loses its
oldest events, never blocks a compaction. With a relay (PostgreSQL), a
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


class EventBus:
    """Per-session fan-out of events to subscribers."""

    def __init__(self, relay: Relay | None = None) -> None:
        self.relay = relay
        self._queues: dict[str, set[asyncio.Queue[Event]]] = defaultdict(set)

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
        for queue in list(self._queues.get(event.session, ())):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    @contextlib.asynccontextmanager
    async def subscribe(self, session: str) -> AsyncIterator[asyncio.Queue[Event]]:
        """A queue receiving ``session``'s events while the block runs."""
        queue: asyncio.Queue[Event] = asyncio.Queue(QUEUE_SIZE)
        self._queues[session].add(queue)
        try:
            yield queue
        finally:
            self._queues[session].discard(queue)
            if not self._queues[session]:
                del self._queues[session]

    def subscribers(self, session: str) -> int:
        """How many listeners ``session`` has."""
        return len(self._queues.get(session, ()))
