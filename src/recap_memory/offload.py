"""CPU work that grows with its input, moved off the event loop when the input is large.

A server's event loop answers every request, ``/healthz`` included; parsing,
measuring or summarizing a megabyte on it stalls them all. A thread hop costs
tens of microseconds, so small inputs stay on the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")

LARGE_BODY_BYTES = 256 * 1024
"""A request body from this size on is parsed in a worker thread."""
MANY_MESSAGES = 64
"""From this many messages on, measuring or decoding them runs in a worker thread."""


async def off_loop(large: bool, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``fn(*args, **kwargs)``: in a worker thread when the input is ``large``, else here."""
    if large:
        return await asyncio.to_thread(fn, *args, **kwargs)
    return fn(*args, **kwargs)
