"""``python -m benchmarks service``: the memory service's costs against baselines of the same run.

- **Gate cost**: one :meth:`Store.append` of one message (the "due or not" gate is
  decided inside it, from counters on the session row) in a session of ``large``
  messages against one of ``small`` messages. Samples alternate between the two
  sessions (ABBA order) so drift reaches both; each sample adds one message.
- **HTTP throughput**: ``recap serve`` in a subprocess (its own core, not this
  process's GIL), ``clients`` concurrent clients each appending one small message at a
  time to its own session, against as many ``GET /healthz`` (the app's no-op). The two
  phases alternate over ``rounds``; the round with the median append ÷ no-op ratio is
  reported.

Nothing ever becomes due (the trigger is out of reach), so nothing compacts; every
session the benchmark creates is deleted at the end.
"""

from __future__ import annotations

import asyncio
import math
import os
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from benchmarks import processes
from recap_memory.errors import RecapError
from recap_memory.messages import Message, to_openai
from recap_memory.settings import SummarizationSettings
from recap_memory.store import Store, migrate, open_engine
from recap_memory.store.urls import is_sqlite

T = TypeVar("T")

GATE_TARGET = 1.5
"""The gate in a large session should cost less than this many times a small one's."""
NEVER_DUE = SummarizationSettings(threshold_chars=10**15)
"""A trigger no benchmark reaches: the gate is evaluated, nothing compacts."""
TENANT = "bench"
FILL_BATCH = 1_000
WARMUP = 5
"""Unrecorded samples (and requests per client) first: connections, caches, statements."""


class ServerFailed(RecapError):
    """``recap serve`` did not start; the message ends with what it printed."""


@dataclass(frozen=True)
class Options:
    """How much ``python -m benchmarks service`` measures."""

    large: int = 100_000
    small: int = 10
    samples: int = 200
    clients: int = 16
    requests: int = 2_000
    """Per endpoint and round."""
    rounds: int = 3


@dataclass(frozen=True)
class Spread:
    """Timed samples in milliseconds: how many, and their nearest-rank quantiles."""

    samples: int
    median_ms: float
    p90_ms: float
    p99_ms: float

    @classmethod
    def of(cls, ms: Sequence[float]) -> Spread:
        """The spread of non-empty ``ms``."""
        ordered = sorted(ms)
        return cls(
            len(ordered),
            percentile(ordered, 0.5),
            percentile(ordered, 0.9),
            percentile(ordered, 0.99),
        )


def percentile(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0 < q ≤ 1) of sorted, non-empty ``ordered``."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass(frozen=True)
class GateCost:
    """One append-and-gate in a large session against one in a small session."""

    small_messages: int
    large_messages: int
    small: Spread
    large: Spread
    ratio: float
    """Large ÷ small, of the medians."""

    @classmethod
    def of(cls, options: Options, small: Sequence[float], large: Sequence[float]) -> GateCost:
        """The figures of the samples (ms) taken in each session."""
        small_spread, large_spread = Spread.of(small), Spread.of(large)
        ratio = large_spread.median_ms / small_spread.median_ms
        return cls(options.small, options.large, small_spread, large_spread, ratio)

    @property
    def passed(self) -> bool:
        """Whether the ratio is under :data:`GATE_TARGET`."""
        return self.ratio < GATE_TARGET


@dataclass(frozen=True)
class Phase:
    """One burst of requests at one endpoint."""

    requests: int
    seconds: float
    per_second: float
    latency: Spread

    @classmethod
    def of(cls, latencies_ms: Sequence[float], seconds: float) -> Phase:
        """The figures of a burst that took ``seconds`` in all."""
        return cls(len(latencies_ms), seconds, len(latencies_ms) / seconds, Spread.of(latencies_ms))


@dataclass(frozen=True)
class Round:
    """A no-op phase and an append phase, run back to back."""

    noop: Phase
    append: Phase
    ratio: float
    """Append ÷ no-op, of the requests per second."""

    @classmethod
    def of(cls, noop: Phase, append: Phase) -> Round:
        """The round of these two phases."""
        return cls(noop, append, append.per_second / noop.per_second)


@dataclass(frozen=True)
class ServiceFigures:
    """Everything one ``python -m benchmarks service`` run measured."""

    database: str
    """``sqlite`` or ``postgresql``."""
    options: Options
    gate: GateCost
    rounds: tuple[Round, ...]

    @property
    def http(self) -> Round:
        """The round with the median append ÷ no-op ratio (the lower one of an even count)."""
        return sorted(self.rounds, key=lambda r: r.ratio)[(len(self.rounds) - 1) // 2]

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready data."""
        return {
            "database": self.database,
            "options": asdict(self.options),
            "gate": {**asdict(self.gate), "target": GATE_TARGET, "passed": self.gate.passed},
            "http": {**asdict(self.http), "round_ratios": [r.ratio for r in self.rounds]},
        }


def run(options: Options, database_url: str | None = None) -> ServiceFigures:
    """Measure on ``database_url``, or on a SQLite file in a temporary folder."""
    if database_url is not None:
        return asyncio.run(measure(database_url, options))
    with tempfile.TemporaryDirectory(prefix="recap-bench-") as folder:
        return asyncio.run(measure(f"sqlite:///{Path(folder) / 'bench.db'}", options))


async def measure(url: str, options: Options) -> ServiceFigures:
    """The gate cost through the store, then the HTTP rounds against a served app."""
    database = "sqlite" if is_sqlite(url) else "postgresql"
    await migrate(url)
    gate = await gate_cost(url, options)
    async with serving(url) as base_url:
        rounds = await http_rounds(base_url, options)
    return ServiceFigures(database, options, gate, rounds)


# gate cost ----------------------------------------------------------------------------------


async def gate_cost(url: str, options: Options) -> GateCost:
    """Time ``samples`` appends of one message to each session, alternating sessions."""
    store = Store(open_engine(url), NEVER_DUE.policy())
    try:
        async with _sessions(store, 2) as (small, large):
            await _fill(store, small, options.small)
            await _fill(store, large, options.large)
            times: dict[str, list[float]] = {small: [], large: []}
            for i in range(WARMUP + options.samples):
                for session in (small, large) if i % 2 == 0 else (large, small):
                    _, ms = await _timed(store.append(TENANT, session, [_message(i)]))
                    if i >= WARMUP:
                        times[session].append(ms)
            return GateCost.of(options, times[small], times[large])
    finally:
        await store.close()


@asynccontextmanager
async def _sessions(store: Store, count: int) -> AsyncIterator[list[str]]:
    """``count`` new sessions of the benchmark's tenant, deleted afterwards."""
    ids = [(await store.create_session(TENANT)).session.uuid for _ in range(count)]
    try:
        yield ids
    finally:
        for session in ids:
            await store.delete_session(TENANT, session)


async def _fill(store: Store, session: str, count: int) -> None:
    """Append ``count`` messages in batches of :data:`FILL_BATCH`."""
    for start in range(0, count, FILL_BATCH):
        batch = range(start, min(count, start + FILL_BATCH))
        await store.append(TENANT, session, [_message(i) for i in batch])


def _message(n: int) -> Message:
    """A small user message, distinct per ``n``."""
    return Message(
        role="user",
        content=f"message {n}: order {1000 + n} shipped on day {n % 28 + 1}, please confirm",
    )


async def _timed(call: Awaitable[T]) -> tuple[T, float]:
    """What ``call`` returns, and how long it took in milliseconds."""
    started = time.perf_counter()
    result = await call
    return result, (time.perf_counter() - started) * 1000


# HTTP throughput ----------------------------------------------------------------------------

Send = Callable[[int, int], Awaitable[httpx.Response]]
"""One request: client ``k`` (each its own :class:`httpx.AsyncClient`, as separate users
would be; one shared pool costs this process twice the CPU) sends the phase's ``n``-th."""


@asynccontextmanager
async def serving(url: str) -> AsyncIterator[str]:
    """``recap serve`` on a free loopback port, no model and no worker; its base URL."""
    env = {
        **os.environ,
        "RECAP_DATABASE_URL": url,
        "RECAP_HOST": "127.0.0.1",
        "RECAP_API_KEYS": "",
        "RECAP_EMBEDDED_WORKER": "false",
        "RECAP_LLM": "extractive",
        "RECAP_THRESHOLD_CHARS": str(NEVER_DUE.threshold_chars),
    }
    with tempfile.TemporaryDirectory() as folder:
        server = processes.serving(env, Path(folder) / "serve.log")
        try:
            base_url, _ = await asyncio.to_thread(server.__enter__)
        except RuntimeError as exc:
            raise ServerFailed(str(exc)[-2000:]) from exc
        try:
            yield base_url
        finally:
            await asyncio.to_thread(server.__exit__, None, None, None)


async def http_rounds(base_url: str, options: Options) -> tuple[Round, ...]:
    """Warm up, then ``rounds`` rounds of a no-op and an append phase, their order
    alternating (ABBA) so drift reaches both."""
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=base_url, timeout=60.0, trust_env=False)
            )
            for _ in range(options.clients)
        ]
        sessions = [await _created(client) for client in clients]
        sends: dict[str, Send] = {
            "noop": lambda k, n: clients[k].get("/healthz"),
            "append": lambda k, n: clients[k].post(
                f"/sessions/{sessions[k]}/messages", json={"messages": [to_openai(_message(n))]}
            ),
        }
        try:
            for send in sends.values():
                await _burst(send, options.clients, options.clients * WARMUP)
            rounds = []
            for r in range(options.rounds):
                order = list(sends) if r % 2 == 0 else list(reversed(sends))
                phases = {
                    name: await _burst(sends[name], options.clients, options.requests)
                    for name in order
                }
                rounds.append(Round.of(**phases))
            return tuple(rounds)
        finally:
            for client, session in zip(clients, sessions, strict=True):
                await client.delete(f"/sessions/{session}")


async def _created(http: httpx.AsyncClient) -> str:
    response = (await http.post("/sessions", json={"title": "recap bench"})).raise_for_status()
    return str(response.json()["id"])


async def _burst(send: Send, clients: int, requests: int) -> Phase:
    """``requests`` requests from ``clients`` concurrent clients, each waiting for its
    answer before sending the next."""
    latencies: list[float] = []

    async def client(k: int) -> None:
        for n in range(k, requests, clients):
            response, ms = await _timed(send(k, n))
            response.raise_for_status()
            latencies.append(ms)

    started = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    return Phase.of(latencies, time.perf_counter() - started)
