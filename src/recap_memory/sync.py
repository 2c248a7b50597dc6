"""Running the async core from synchronous code, inside a running event loop or not."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
_local = threading.local()


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """The result of ``work``, run to completion on this thread's own event loop (kept
    for the next call: starting a loop per call would cost more than a turn's check);
    when this thread already runs a loop (Jupyter, an async web handler), on a worker
    thread's, since loops cannot nest."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_on_own_loop(work)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_run_on_own_loop, work).result()


def _run_on_own_loop(work: Coroutine[Any, Any, T]) -> T:
    return _own_loop().run_until_complete(work)


def _own_loop() -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
    return loop
