"""Real recap processes for the service tests: environments, workers, waiting.

(Ports and starting processes come from :mod:`benchmarks.processes`.)
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.processes import free_port, start_recap
from tests.conftest import CLEAN_ENV
from tests.service.conftest import SMALL

LEASE_S = 2.0


def recap_env(database_url: str | None = None, **values: str) -> dict[str, str]:
    """The environment of a recap process in the tests: none of the caller's ``RECAP_`` or
    ``SUMMARIZATION_`` settings, the small test thresholds, a fast poll, then ``values``."""
    env = {k: v for k, v in CLEAN_ENV.items() if not k.startswith(("RECAP_", "SUMMAR"))}
    if database_url is not None:
        env["RECAP_DATABASE_URL"] = database_url
    return {
        **env,
        "RECAP_THRESHOLD_CHARS": str(SMALL.threshold_chars),
        "RECAP_KEEP_CHARS": str(SMALL.keep_chars),
        "RECAP_POLL_INTERVAL_S": "0.1",
        **values,
    }


def worker_env(database_url: str, model_url: str) -> dict[str, str]:
    """A ``recap worker`` on the test database, summarizing through the model server, with the
    app's thresholds, a short lease and a fast poll."""
    return recap_env(
        database_url,
        RECAP_LLM="openai:test-model",
        RECAP_LLM_URL=model_url,
        RECAP_FALLBACK="none",
        RECAP_LLM_ATTEMPTS="1",
        RECAP_LLM_TIMEOUT="120",
        RECAP_LEASE_S=str(LEASE_S),
        RECAP_RETRY_BASE_S="0.2",
    )


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``python -m recap worker`` in its own process, its output in ``log``."""
    return start_recap(["worker"], env, log)


async def until(
    what: str, check: Callable[[], Any], logs: list[Path], timeout: float = 30.0
) -> None:
    """Wait (bounded) for ``check()`` (sync or async) to be true; fail with the workers' logs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            output = "\n".join(
                f"--- {p.name}\n{p.read_text(errors='replace')}" for p in logs if p.exists()
            )
            raise AssertionError(f"timed out waiting for {what}\n{output}")
        await asyncio.sleep(0.05)


__all__ = [
    "LEASE_S",
    "free_port",
    "recap_env",
    "start_recap",
    "start_worker",
    "until",
    "worker_env",
]
