"""The server stays responsive while it compacts a large session.

``recap serve`` (embedded worker, extractive summarizer, default settings) on a
SQLite file; one client probes ``GET /healthz`` every ``interval`` seconds, first
while the server is idle (the baseline of the same run), then while another
client appends ``messages`` messages of ``chars`` characters in one request and
the pass that append makes due runs to its end. A liveness probe with a short
timeout must never see the server stall.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from benchmarks import processes
from benchmarks.service import percentile

WORDS = "invoice ticket customer refund order shipped warehouse payment account delayed".split()
PASS_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Probes:
    """Latencies of ``GET /healthz`` in milliseconds: how many, median, p99 and worst."""

    samples: int
    median_ms: float
    p99_ms: float
    max_ms: float

    @classmethod
    def of(cls, ms: list[float]) -> Probes:
        """The figures of non-empty ``ms``."""
        ordered = sorted(ms)
        return cls(len(ordered), percentile(ordered, 0.5), percentile(ordered, 0.99), ordered[-1])


@dataclass(frozen=True)
class Responsiveness:
    """``/healthz`` idle and during the append and its pass, and what the pass folded."""

    body_bytes: int
    pass_seconds: float
    idle: Probes
    busy: Probes
    folded_messages: int


def measure(folder: Path, *, messages: int = 1_000, chars: int = 6_800) -> Responsiveness:
    """Serve from ``folder``, probe idle for a second, then through the append and its pass."""
    env = {
        **processes.clean_environment(),
        "RECAP_DATABASE_URL": f"sqlite:///{folder / 'responsive.db'}",
        "RECAP_POLL_INTERVAL_S": "0.1",
    }
    body = json.dumps({"messages": _messages(messages, chars)})
    with (
        processes.serving(env, folder / "serve.log", cwd=folder) as (url, _),
        httpx.Client(base_url=url, timeout=PASS_TIMEOUT_S, trust_env=False) as client,
    ):
        session = client.post("/sessions", json={}).raise_for_status().json()["id"]
        with _probing(url) as idle:
            time.sleep(1.0)
        with _probing(url) as busy:
            started = time.perf_counter()
            client.post(
                f"/sessions/{session}/messages",
                content=body,
                headers={"content-type": "application/json"},
            ).raise_for_status()
            folded = _until_folded(client, session, started)
            took = time.perf_counter() - started
    return Responsiveness(len(body), took, Probes.of(idle), Probes.of(busy), folded)


def _messages(count: int, chars: int) -> list[dict[str, str]]:
    rng = random.Random(7)
    words = chars // 10
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": " ".join(f"{rng.choice(WORDS)}{rng.randint(0, 999)}" for _ in range(words)),
        }
        for i in range(count)
    ]


@contextmanager
def _probing(url: str, interval: float = 0.02) -> Iterator[list[float]]:
    """Probe ``/healthz`` from a thread of its own until the block ends; the latencies (ms)."""
    latencies: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        with httpx.Client(base_url=url, timeout=30.0, trust_env=False) as prober:
            while not stop.is_set():
                sent = time.perf_counter()
                prober.get("/healthz").raise_for_status()
                latencies.append(1000 * (time.perf_counter() - sent))
                time.sleep(interval)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    try:
        yield latencies
    finally:
        stop.set()
        thread.join()


def _until_folded(client: httpx.Client, session: str, started: float) -> int:
    """Wait for the session's first summary; how many messages it folded."""
    while time.perf_counter() - started < PASS_TIMEOUT_S:
        rows = client.get(f"/sessions/{session}/summaries").raise_for_status().json()
        if rows:
            return int(rows[0]["messages"])
        time.sleep(0.1)
    raise TimeoutError(f"no summary within {PASS_TIMEOUT_S:.0f} s")
