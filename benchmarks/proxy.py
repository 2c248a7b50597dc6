"""``python -m benchmarks proxy``: what ``/v1/chat/completions`` adds to a request.

The stub model server on loopback, and ``recap serve`` with it as the upstream.
One client sends the same small chat completion (nothing ever due) directly to
the stub and through recap, alternating (ABBA) so drift reaches both; through
recap once without a session (stateless) and once with ``X-Recap-Session`` (the
new turn appended, the reply kept). The figure is the added latency: through
recap minus direct, at the median and the 99th percentile.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from benchmarks import processes
from benchmarks.service import percentile
from recap_memory.testing.model_server import ModelServer, Reply

TARGET_MS = 5.0
"""The added median latency the proxy should stay under on this machine."""
WARMUP = 20


@dataclass(frozen=True)
class Latency:
    """Milliseconds per request: median and 99th percentile."""

    median_ms: float
    p99_ms: float

    @classmethod
    def of(cls, ms: list[float]) -> Latency:
        """The figures of non-empty ``ms``."""
        ordered = sorted(ms)
        return cls(percentile(ordered, 0.5), percentile(ordered, 0.99))


@dataclass(frozen=True)
class ProxyFigures:
    """Direct, stateless and session latencies of one run, and the added medians."""

    requests: int
    direct: Latency
    stateless: Latency
    session: Latency

    @property
    def added_stateless_ms(self) -> float:
        """Stateless through recap minus direct, at the median."""
        return self.stateless.median_ms - self.direct.median_ms

    @property
    def added_session_ms(self) -> float:
        """Session mode through recap minus direct, at the median."""
        return self.session.median_ms - self.direct.median_ms


def run(requests: int = 300) -> ProxyFigures:
    """Measure ``requests`` requests of each kind."""
    with (
        tempfile.TemporaryDirectory(prefix="recap-proxy-") as folder,
        ModelServer(Reply("The invoice was paid on 3 May.")) as model,
    ):
        env = {
            **processes.clean_environment(),
            "RECAP_DATABASE_URL": f"sqlite:///{Path(folder) / 'proxy.db'}",
            "RECAP_UPSTREAM_URL": f"{model.url}/v1",
        }
        with (
            processes.serving(env, Path(folder) / "serve.log", cwd=Path(folder)) as (url, _),
            httpx.Client(timeout=30.0, trust_env=False) as client,
        ):
            return _measure(client, model.url, url, requests)


def _measure(client: httpx.Client, stub: str, recap: str, requests: int) -> ProxyFigures:
    body = {"model": "m", "messages": [{"role": "user", "content": "When was invoice 1007 paid?"}]}
    turn = iter(range(10**9))

    def session_body() -> dict[str, object]:
        return {"model": "m", "messages": [{"role": "user", "content": f"Turn {next(turn)}."}]}

    kinds: dict[str, Callable[[], httpx.Response]] = {
        "direct": lambda: client.post(f"{stub}/v1/chat/completions", json=body),
        "stateless": lambda: client.post(f"{recap}/v1/chat/completions", json=body),
        "session": lambda: client.post(
            f"{recap}/v1/chat/completions",
            json=session_body(),
            headers={"X-Recap-Session": "bench"},
        ),
    }
    samples: dict[str, list[float]] = {name: [] for name in kinds}
    for n in range(WARMUP + requests):
        order = list(kinds) if n % 2 == 0 else list(reversed(kinds))
        for name in order:
            started = time.perf_counter()
            kinds[name]().raise_for_status()
            if n >= WARMUP:
                samples[name].append(1000 * (time.perf_counter() - started))
    return ProxyFigures(requests, *(Latency.of(samples[name]) for name in kinds))
