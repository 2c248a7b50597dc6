"""Real recap processes on loopback, for tests and benchmarks: a free port, a process with
its output in a log file, a folder for those logs, and ``recap serve`` started and waited
for."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

START_TIMEOUT_S = 30.0
SETTING_PREFIXES = ("RECAP_", "SUMMAR", "OPENAI_", "UTILITY_MODEL", "INFERENCE_SERVICE")
"""Environment variables that configure recap (or its model): a measured process starts
without the caller's."""


def clean_environment() -> dict[str, str]:
    """This process's environment without any recap or model setting."""
    return {k: v for k, v in os.environ.items() if not k.startswith(SETTING_PREFIXES)}


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LogFolder:
    """A temporary folder for a run's process logs. :meth:`close` removes it once the run
    has said it passed (``passed = True``); a run that failed or never got that far keeps
    it, and :meth:`close` prints where on stderr."""

    def __init__(self, prefix: str) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=prefix))
        self.passed = False

    def close(self) -> None:
        """Remove the folder if the run passed, else say where its logs are kept."""
        if self.passed:
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            print(f"the run failed: its processes' logs are kept in {self.path}", file=sys.stderr)


def start_recap(
    args: list[str], env: dict[str, str], log: Path, *, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """``python -m recap ARGS`` in its own process, its output in ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "recap_memory", *args],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until ``url``/healthz answers; RuntimeError with the log if the process dies
    or :data:`START_TIMEOUT_S` passes."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"recap serve exited ({process.returncode}):\n{log.read_text()}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/healthz").status_code == 200:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"recap serve did not come up:\n{log.read_text()}")
        time.sleep(0.05)


@contextlib.contextmanager
def serving(
    env: dict[str, str], log: Path, *, cwd: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``recap serve`` on a free port, up and answering: its base URL and process.
    SIGTERM on the way out (waited for)."""
    port = free_port()
    process = start_recap(["serve", "--port", str(port)], env, log, cwd=cwd)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
