"""Running the async core from synchronous code, inside a running event loop or not."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """The result of ``work``: on a new event loop, or — when this thread already runs
    one (Jupyter, an async web handler) — on a new loop in a worker thread, since
    ``asyncio.run`` cannot nest."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()
