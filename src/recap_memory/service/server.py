"""uvicorn's server, stopping the way ``recap serve`` promises: on SIGTERM the open event
streams end at once (instead of holding the graceful shutdown up to its timeout and being
cancelled), requests in flight finish, and the process exits 0."""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Iterator

import uvicorn
from fastapi import FastAPI

from recap_memory.service.app import stop_streams


class Server(uvicorn.Server):
    """A :class:`uvicorn.Server` for the recap app."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.recap_app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """End the event streams, then shut down as uvicorn does (in-flight requests finish
        within ``timeout_graceful_shutdown``)."""
        stop_streams(self.recap_app)
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's signal handling, but a SIGTERM that stopped the server gracefully is
        not raised again afterwards: the exit status is 0, as for ``recap worker``."""
        with super().capture_signals():
            try:
                yield
            finally:
                captured: list[int] = getattr(self, "_captured_signals", [])
                captured[:] = [s for s in captured if s != signal.SIGTERM]
