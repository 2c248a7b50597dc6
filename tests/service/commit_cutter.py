"""A TCP proxy in front of PostgreSQL that cuts the connection around a COMMIT.

Armed with ``"after"``, it forwards the next ``COMMIT`` to the server, waits for the
server's answer (so the transaction is committed) and then closes both sides without
passing that answer on: the client sees its connection drop during COMMIT although
the write happened. Armed with ``"before"`` it closes both sides instead of
forwarding the ``COMMIT``: the server rolls the transaction back.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Literal

COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"
"""psycopg's COMMIT: a simple-query message holding ``COMMIT``."""


class CommitCutter:
    """The proxy: ``url(database)`` names a database through it; ``arm`` the next cut."""

    def __init__(self, upstream_port: int = 5432) -> None:
        self.upstream_port = upstream_port
        self.cuts = 0
        """How many connections were cut (a cut is counted when it happens)."""
        self._armed: Literal["before", "after"] | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> CommitCutter:
        self._server = await asyncio.start_server(self._connect, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    def url(self, database_url: str) -> str:
        """``database_url`` (on 127.0.0.1:5432) routed through the proxy."""
        return database_url.replace(f":{self.upstream_port}/", f":{self.port}/")

    def arm(self, when: Literal["before", "after"]) -> None:
        """Cut the connection that sends the next COMMIT, before or after forwarding it."""
        self._armed = when

    async def _connect(
        self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
    ) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        committed = asyncio.Event()  # set when a COMMIT went to the server under "after"

        async def upstream() -> None:
            while data := await client_r.read(65536):
                if self._armed and COMMIT in data:
                    when, self._armed = self._armed, None
                    if when == "before":
                        break
                    server_w.write(data)
                    await server_w.drain()
                    committed.set()
                    return
                server_w.write(data)
                await server_w.drain()

        async def downstream() -> None:
            while data := await server_r.read(65536):
                if committed.is_set():
                    return  # the server answered the COMMIT: keep the answer from the client
                client_w.write(data)
                await client_w.drain()

        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        pumps = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            if committed.is_set():
                await asyncio.wait_for(pumps[1], 5)  # until the server's answer arrived
                self.cuts += 1
            elif pumps[0].done() and not client_r.at_eof():
                self.cuts += 1
        finally:
            for pump in pumps:
                pump.cancel()
            for writer in (client_w, server_w):
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
            self._tasks.discard(task)
