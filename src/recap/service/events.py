"""Compaction events, published to whoever listens on a session (the SSE stream).

The bus is in-process: every subscriber gets its own bounded queue; a slow
subscriber loses its oldest events, never blocks a compaction.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

QUEUE_SIZE = 256


@dataclass(frozen=True)
class Event:
    """One event: ``name`` (``summarization.started`` …) and its JSON data."""

    name: str
    session: str
    data: dict[str, Any] = field(default_factory=dict)


class EventBus:
    """Per-session fan-out of events to subscribers."""

    def __init__(self) -> None:
        self._queues: dict[str, set[asyncio.Queue[Event]]] = defaultdict(set)

    def publish(self, name: str, session: str, **data: Any) -> Event:
        """Send an event to every subscriber of ``session``."""
        event = Event(name, session, {"session_id": session, **data})
        for queue in list(self._queues.get(session, ())):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)
        return event

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
