"""Events across processes on PostgreSQL: ``NOTIFY`` on publish, ``LISTEN`` in every server.

A compaction done by ``recap worker`` on one machine reaches the SSE clients of
every ``recap serve`` process: the worker sends the event with ``pg_notify``
(after its commit), each server listens on one dedicated connection and hands
what arrives to its in-process bus. The listener reconnects by itself when
PostgreSQL restarts. Events are notifications, not state: one lost while the
database is down costs a client a live update, never data.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import psycopg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from recap_memory.service.events import Event
from recap_memory.store.urls import libpq_url

log = logging.getLogger("recap_memory.service")
CHANNEL = "recap_events"
MAX_PAYLOAD = 7_900
"""PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more; bulky fields are dropped."""
RECONNECT_MAX_S = 10.0


def encode(event: Event) -> str:
    """The event as a NOTIFY payload (a summary's text left out when too long)."""
    payload = {"name": event.name, "session": event.session, "data": event.data}
    body = json.dumps(payload, default=str)
    if len(body.encode()) > MAX_PAYLOAD and isinstance(event.data.get("summary"), dict):
        summary = {
            k: v for k, v in event.data["summary"].items() if k not in ("content", "instructions")
        }
        payload["data"] = {**event.data, "summary": summary}
        body = json.dumps(payload, default=str)
    return body


def decode(payload: str) -> Event:
    """An event from a NOTIFY payload."""
    data: dict[str, Any] = json.loads(payload)
    return Event(str(data["name"]), str(data["session"]), dict(data["data"]))


class PostgresRelay:
    """Sends events through PostgreSQL and listens for everyone's."""

    def __init__(self, url: str, engine: AsyncEngine) -> None:
        self.conninfo = libpq_url(url)
        self.engine = engine
        self.listening = asyncio.Event()

    async def send(self, event: Event) -> None:
        """NOTIFY every listening server of ``event``."""
        async with self.engine.connect() as connection:
            await connection.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": CHANNEL, "payload": encode(event)},
            )
            await connection.commit()

    async def listen(self, deliver: Callable[[Event], None]) -> None:
        """Hand every event to ``deliver`` until cancelled, reconnecting after failures."""
        pause = 0.5
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True
                ) as connection:
                    await connection.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    pause = 0.5
                    async for notification in connection.notifies():
                        try:
                            deliver(decode(notification.payload))
                        except (ValueError, KeyError, TypeError):
                            log.warning("ignoring a malformed event: %.200s", notification.payload)
            except (psycopg.Error, OSError) as exc:
                self.listening.clear()
                log.warning("event listener lost PostgreSQL (%s); reconnecting", exc)
                await asyncio.sleep(pause)
                pause = min(RECONNECT_MAX_S, pause * 2)
