"""What "now" is: a clock is any function returning an aware UTC datetime.

The service reads time only through a clock it is given (leases, retry backoff, due
times), so tests drive time with :class:`recap_memory.testing.ManualClock` instead of
sleeping against the wall clock.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

Clock = Callable[[], dt.datetime]


def utcnow() -> dt.datetime:
    """Now, in UTC (the wall clock)."""
    return dt.datetime.now(dt.UTC)
