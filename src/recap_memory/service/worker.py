"""The background worker: claims due sessions and compacts them, until told to stop.

The same loop runs inside ``recap serve`` (the embedded default) and in
``recap worker`` processes. It is driven by state in the database — sessions
marked due — so nothing is lost when a process dies: an in-process wake-up
only makes it look sooner, and it polls for work other processes left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from recap_memory.service.compaction import CompactionRunner

log = logging.getLogger("recap_memory.worker")
ERROR_PAUSE_MAX_S = 30.0


class Worker:
    """``concurrency`` loops that each claim one due session at a time."""

    def __init__(
        self, runner: CompactionRunner, *, concurrency: int = 1, poll_interval_s: float = 1.0
    ) -> None:
        self.runner = runner
        self.concurrency = concurrency
        self.poll_interval_s = poll_interval_s
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def wake(self) -> None:
        """Look for due sessions now (an append just made one due)."""
        self._wake.set()

    def start(self) -> None:
        """Start the loops as tasks of the running event loop."""
        self._stop.clear()
        self._tasks = [asyncio.create_task(self._loop(n)) for n in range(self.concurrency)]

    async def stop(self, *, grace_s: float = 10.0) -> None:
        """Let passes in flight finish (up to ``grace_s``), then cancel the loops."""
        self._stop.set()
        self._wake.set()
        _, pending = await asyncio.wait(self._tasks, timeout=grace_s) if self._tasks else ((), ())
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def run(self) -> None:
        """Run until cancelled (for ``recap worker``)."""
        self.start()
        try:
            await asyncio.gather(*self._tasks)
        finally:
            await self.stop()

    async def drain(self) -> int:
        """Compact every session due now, one after another; how many passes ran."""
        passes = 0
        while await self.runner.run_due() is not None:
            passes += 1
        return passes

    async def _loop(self, number: int) -> None:
        pause = self.poll_interval_s
        while not self._stop.is_set():
            try:
                outcome = await self.runner.run_due()
                pause = self.poll_interval_s
            except Exception:
                log.exception("worker %d: claiming a due session failed; retrying", number)
                outcome = None
                pause = min(ERROR_PAUSE_MAX_S, pause * 2)
            if outcome is not None:
                continue  # more may be due
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=pause)
