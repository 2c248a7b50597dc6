"""A clock a test moves by hand (see :mod:`recap_memory.clock`)."""

from __future__ import annotations

import datetime as dt


class ManualClock:
    """Stands still until :meth:`advance` moves it; starts at the wall clock's now."""

    def __init__(self, start: dt.datetime | None = None) -> None:
        self.now = start or dt.datetime.now(dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``."""
        self.now += dt.timedelta(seconds=seconds)
