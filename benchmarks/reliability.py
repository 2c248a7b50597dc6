"""``python -m benchmarks reliability``: many processes on one PostgreSQL, under load and faults.

It starts, on this machine, ``servers`` × ``recap serve`` and ``workers`` ×
``recap worker`` on a fresh PostgreSQL database, and a stub model server on
loopback. ``clients`` concurrent clients append to ``sessions`` sessions
(alternating servers) while compactions run, and faults are injected along the
way: the model answers 500s, times out and returns garbage for a while; a
worker holding a lease is SIGKILLed (and replaced); PostgreSQL restarts once.

The restart is of a private cluster the run starts for itself
(:class:`benchmarks.pgcluster.ThrowawayCluster`), where its database then lives: the
machine's own PostgreSQL is never stopped. Without the restart fault the run creates its
database on ``admin_url`` instead.

Afterwards, with the faults over and the workers given time to catch up, it
checks: every acknowledged message is in the record exactly once, in order;
every context is a valid history; summary ranges never overlap and leave no
gap below the summarized-through id; no session is left due; the stats totals
equal the usage events and every committed pass left exactly one summary row.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import signal
import subprocess
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from benchmarks.pgcluster import ThrowawayCluster
from benchmarks.processes import LogFolder, free_port, start_recap
from recap_memory.messages import from_openai, is_valid_history
from recap_memory.store.urls import libpq_url
from recap_memory.testing.model_server import Garbage, Hang, ModelServer, Reply, Status

STUB_SUMMARY = (
    "**Investigating:** the customer's invoices and tickets.\n"
    "**Key findings:** - several tickets were matched to their invoices.\n"
    "**Current state:** the conversation continues."
)
LLM_TIMEOUT_S = 2.0
LEASE_S = 3.0
REFUSED_PAUSE_S = 0.25
THRESHOLD_CHARS, KEEP_CHARS = 2_000, 600


@dataclass(frozen=True)
class Options:
    """How big a run is."""

    admin_url: str = "postgresql://postgres@127.0.0.1:5432/postgres"
    """A PostgreSQL database to connect to while creating (and dropping) the run's own;
    unused with ``restart_postgres``, whose run brings a private cluster."""
    servers: int = 2
    workers: int = 3
    clients: int = 32
    sessions: int = 200
    requests: int = 3_200
    fuzz_examples: int = 25
    settle_timeout_s: float = 180.0
    restart_postgres: bool = True
    """Run on a private PostgreSQL cluster and restart it once under load."""
    keep_database: bool = False
    """Leave the run's database behind for inspection (with ``restart_postgres``: the
    private cluster's directory, stopped)."""

    @classmethod
    def short(cls, **changes: Any) -> Options:
        """The version the test suite runs: the same processes and faults, fewer requests."""
        values: dict[str, Any] = {
            "clients": 8,
            "sessions": 16,
            "requests": 400,
            "fuzz_examples": 3,
            "settle_timeout_s": 90.0,
            **changes,
        }
        return cls(**values)


@dataclass
class Fault:
    """One fault: whether it was injected, and the evidence that the system survived it."""

    name: str
    injected: bool = False
    survived: bool = False
    detail: str = ""


@dataclass
class Check:
    """One property checked after the run."""

    name: str
    passed: bool
    detail: str = ""


@dataclass
class Figures:
    """Everything a run measured."""

    sent: int = 0
    acknowledged: int = 0
    refused: int = 0
    """Requests answered with an error (e.g. 503 while PostgreSQL restarted): not acknowledged."""
    lost: int = 0
    """Acknowledged messages missing from the record, or there twice (must be 0)."""
    throughput: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    compactions: int = 0
    faults: list[Fault] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    bad_inputs_tried: int = 0
    bad_input_5xx: int = 0
    bad_input_failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing lost, every fault survived, every check passed, no 5xx on bad input."""
        return (
            self.lost == 0
            and all(f.survived for f in self.faults if f.injected)
            and all(c.passed for c in self.checks)
            and self.bad_input_5xx == 0
        )

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-able data."""
        return {**asdict(self), "ok": self.ok}


class Fleet:
    """The recap processes of a run, with their logs."""

    def __init__(self, database_url: str, model_url: str, folder: Path) -> None:
        self.database_url = database_url
        self.model_url = model_url
        self.folder = folder
        self.servers: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self._logs = 0

    def env(self, **extra: str) -> dict[str, str]:
        """The environment every process of the run gets."""
        base = {
            k: v for k, v in os.environ.items() if not k.startswith(("RECAP_", "SUMMAR", "OPENAI"))
        }
        return {
            **base,
            "RECAP_DATABASE_URL": self.database_url,
            "RECAP_LLM": "openai:stub",
            "RECAP_LLM_URL": self.model_url,
            "RECAP_LLM_TIMEOUT": str(LLM_TIMEOUT_S),
            "RECAP_LLM_ATTEMPTS": "2",
            "RECAP_FALLBACK": "none",
            "RECAP_THRESHOLD_CHARS": str(THRESHOLD_CHARS),
            "RECAP_KEEP_CHARS": str(KEEP_CHARS),
            "RECAP_LEASE_S": str(LEASE_S),
            "RECAP_RETRY_BASE_S": "0.5",
            "RECAP_RETRY_MAX_S": "4",
            "RECAP_POLL_INTERVAL_S": "0.2",
            "RECAP_SHUTDOWN_GRACE_S": "5",
            **extra,
        }

    def _start(self, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        self._logs += 1
        return start_recap(args, env, self.folder / f"{self._logs:02d}-{args[0]}.log")

    def start_server(self) -> str:
        """One more ``recap serve`` (no embedded worker); its base URL."""
        port = free_port()
        env = self.env(RECAP_EMBEDDED_WORKER="false", RECAP_MIGRATE_ON_START="false")
        self.servers.append(
            (f"http://127.0.0.1:{port}", self._start(["serve", "--port", str(port)], env))
        )
        return self.servers[-1][0]

    def start_worker(self) -> subprocess.Popen[bytes]:
        """One more ``recap worker``."""
        self.workers.append(self._start(["worker"], self.env()))
        return self.workers[-1]

    def stop(self) -> None:
        """SIGTERM everything still running, then SIGKILL what does not stop."""
        processes = [p for _, p in self.servers] + self.workers
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    def logs(self) -> str:
        """Every process's output, for a failure report."""
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
            for p in sorted(self.folder.glob("*.log"))
        )


class Progress:
    """How many load requests are done, awaitable by fraction."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self._changed = asyncio.Event()

    def step(self) -> None:
        """One more request done."""
        self.done += 1
        self._changed.set()

    async def reach(self, fraction: float) -> None:
        """Wait until ``fraction`` of the requests are done."""
        while self.done < fraction * self.total:
            self._changed.clear()
            await self._changed.wait()


@dataclass
class Load:
    """What the clients sent and what was acknowledged."""

    acknowledged: dict[str, list[tuple[list[int], list[str]]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    latencies: list[float] = field(default_factory=list)
    refused: int = 0
    sent: int = 0
    acked_after: dict[str, int] = field(default_factory=dict)
    """Acknowledged requests after each fault (by name): the system kept serving."""


def _request_messages(session: str, k: int) -> list[dict[str, str]]:
    topic = f"s{session[:8]}-r{k}"
    return [
        {"role": "user", "content": f"[{topic}] Where is invoice {k} of ticket {topic}? " * 4},
        {"role": "assistant", "content": f"[{topic}] Invoice {k} was paid on day {k % 28}. " * 4},
    ]


async def _load(
    urls: list[str], sessions: list[str], options: Options, progress: Progress, load: Load
) -> float:
    """Run the clients; returns the wall time."""
    counter = iter(range(options.requests))

    async def client(number: int) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            for k in counter:
                session = sessions[k % len(sessions)]
                messages = _request_messages(session, k)
                url = f"{urls[(k + number) % len(urls)]}/sessions/{session}/messages"
                started = time.perf_counter()
                load.sent += 1
                try:
                    response = await http.post(url, json={"messages": messages})
                except httpx.TransportError:
                    response = None
                if response is None or response.status_code != 201:
                    load.refused += 1  # not acknowledged: a real client waits a little
                    await asyncio.sleep(REFUSED_PAUSE_S)
                else:
                    load.latencies.append(time.perf_counter() - started)
                    contents = [m["content"] for m in messages]
                    load.acknowledged[session].append((response.json()["ids"], contents))
                    for name in load.acked_after:
                        load.acked_after[name] += 1
                progress.step()

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(options.clients)))
    return time.perf_counter() - started


async def _leased_owners(conninfo: str) -> set[str]:
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
        rows = await connection.execute(
            "SELECT lease_owner FROM sessions WHERE lease_expires_at > now() "
            "AND lease_owner IS NOT NULL"
        )
        return {str(r[0]) for r in await rows.fetchall()}


def _worker_owner(fleet: Fleet, process: subprocess.Popen[bytes]) -> str | None:
    """The lease owner name a worker printed when it started."""
    index = fleet.workers.index(process)
    logs = sorted(fleet.folder.glob("*-worker.log"))
    if index >= len(logs):
        return None
    for line in logs[index].read_text(errors="replace").splitlines():
        if line.startswith("recap: worker ") and "compacting" in line:
            return line.split()[2]
    return None


async def _inject(
    fleet: Fleet,
    model: ModelServer,
    conninfo: str,
    cluster: ThrowawayCluster | None,
    progress: Progress,
    load: Load,
) -> list[Fault]:
    """The faults, in order, at fixed fractions of the load."""
    faults: list[Fault] = []

    def injected(name: str, detail: str) -> None:
        faults.append(Fault(name, injected=True, detail=detail))
        load.acked_after[name] = 0

    await progress.reach(0.15)
    model.then(*[Status(500)] * 12)
    injected("model 500s", "12 answers of HTTP 500")
    await progress.reach(0.3)
    model.then(*[Hang(LLM_TIMEOUT_S + 1)] * 4)
    injected("model timeouts", f"4 answers hung past the {LLM_TIMEOUT_S:.0f} s timeout")
    await progress.reach(0.4)
    victim, owner = None, None
    deadline = time.monotonic() + 10
    while victim is None and time.monotonic() < deadline:
        holding = await _leased_owners(conninfo)
        for process in fleet.workers:
            name = _worker_owner(fleet, process)
            if process.poll() is None and name in holding:
                victim, owner = process, name
                break
        await asyncio.sleep(0.05)
    if victim is not None:
        victim.send_signal(signal.SIGKILL)
        fleet.start_worker()
        injected("SIGKILL a worker mid-compaction", f"{owner} killed while holding a lease")
    else:
        faults.append(Fault("SIGKILL a worker mid-compaction", detail="no lease held in 10 s"))
    await progress.reach(0.5)
    model.then(*[Garbage()] * 10)
    injected("model garbage", "10 answers that are not JSON")
    if cluster is not None:
        await progress.reach(0.65)
        injected("PostgreSQL restart", f"the run's cluster on port {cluster.port} restarted")
        await asyncio.to_thread(cluster.restart)
    return faults


async def _probe(urls: list[str], session: str, load: Load) -> None:
    """After the faults, one append through every server (retried while it recovers)."""
    async with httpx.AsyncClient(timeout=30) as http:
        for n, url in enumerate(urls):
            messages = _request_messages(session, -1 - n)
            for _ in range(120):
                try:
                    response = await http.post(
                        f"{url}/sessions/{session}/messages", json={"messages": messages}
                    )
                except httpx.TransportError:
                    response = None
                if response is not None and response.status_code == 201:
                    contents = [m["content"] for m in messages]
                    load.acknowledged[session].append((response.json()["ids"], contents))
                    for name in load.acked_after:
                        load.acked_after[name] += 1
                    break
                await asyncio.sleep(REFUSED_PAUSE_S)


async def _until(check: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if await check():
                return True
        except (httpx.TransportError, psycopg.Error):
            pass
        await asyncio.sleep(0.25)
    return False


async def _all_settled(url: str, count: int) -> bool:
    async with httpx.AsyncClient(timeout=30) as http:
        listed = (await http.get(f"{url}/sessions", params={"limit": 200})).json()["items"]
        offset = len(listed)
        while offset < count:
            page = await http.get(f"{url}/sessions", params={"limit": 200, "offset": offset})
            listed += page.json()["items"]
            offset += 200
        return all(not s["due"] and not s["compacting"] for s in listed)


async def _verify(
    url: str, conninfo: str, load: Load, sessions: list[str]
) -> tuple[list[Check], int]:
    """The checks after the run, and how many acknowledged messages were lost."""
    lost = 0
    invalid, overlapping, gaps = [], [], []
    summary_rows = 0
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        for session in sessions:
            record: list[dict[str, Any]] = []
            after = None
            while True:
                params: dict[str, Any] = {"limit": 1000, **({"after": after} if after else {})}
                page = (await http.get(f"/sessions/{session}/messages", params=params)).json()
                record += page["items"]
                if page["next_after"] is None:
                    break
                after = page["next_after"]
            by_id = {int(m["id"]): m["content"] for m in record}
            ids = [int(m["id"]) for m in record]
            if len(set(ids)) != len(ids) or ids != sorted(ids):
                lost += len(ids) - len(set(ids))
            for acked_ids, contents in load.acknowledged.get(session, []):
                for message_id, content in zip(acked_ids, contents, strict=True):
                    if by_id.get(message_id) != content:
                        lost += 1
                contiguous = [i for i in ids if acked_ids[0] <= i <= acked_ids[-1]]
                if contiguous != acked_ids:
                    lost += 1  # something landed inside an acknowledged request
            context = (await http.get(f"/sessions/{session}/context")).json()
            if not is_valid_history([from_openai(m) for m in context["messages"]]):
                invalid.append(session)
            rows = (
                await http.get(
                    f"/sessions/{session}/summaries", params={"include_superseded": True}
                )
            ).json()
            summary_rows += len(rows)
            active = sorted(
                (r["first_message_id"], r["last_message_id"])
                for r in rows
                if r["superseded_by"] is None
            )
            if any(a[1] >= b[0] for a, b in itertools.pairwise(active)):
                overlapping.append(session)
            through = context["summarized_through"]
            covered = {i for first, last in active for i in ids if first <= i <= last}
            carried = {int(c) for r in rows if r["superseded_by"] is None for c in r["carried"]}
            below = [i for i in ids if through is not None and i <= through]
            if any(i not in covered and i not in carried for i in below):
                gaps.append(session)
        stats = (await http.get("/stats")).json()["summary"]
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
        row = await (
            await connection.execute(
                "SELECT count(*) FILTER (WHERE kind = 'compaction' "
                "AND path IN ('llm', 'extractive', 'fallback')), "
                "coalesce(sum(chars_removed), 0) FROM usage_events"
            )
        ).fetchone()
        due = await (
            await connection.execute("SELECT count(*) FROM sessions WHERE due_since IS NOT NULL")
        ).fetchone()
    assert row is not None and due is not None
    committed, chars = int(row[0]), int(row[1])
    checks = [
        Check("every acknowledged message in the record once, in order", lost == 0, f"{lost} lost"),
        Check("every context a valid history", not invalid, f"{len(invalid)} invalid"),
        Check("summary ranges never overlap", not overlapping, f"{len(overlapping)} overlapping"),
        Check("no gap below summarized-through", not gaps, f"{len(gaps)} with gaps"),
        Check("every due session compacted", int(due[0]) == 0, f"{due[0]} still due"),
        Check(
            "stats totals equal the usage events",
            stats["total_summarizations"] == committed and stats["total_chars_compacted"] == chars,
            f"stats {stats['total_summarizations']} / {stats['total_chars_compacted']} chars, "
            f"events {committed} / {chars} chars",
        ),
        Check(
            "one summary row per committed pass",
            summary_rows == committed,
            f"{summary_rows} rows, {committed} passes",
        ),
    ]
    return checks, lost


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(
    options: Options,
    *,
    fuzz: Callable[[str, int], Awaitable[tuple[int, int, list[str]]]] | None = None,
) -> Figures:
    """One reliability run (see the module docstring); ``fuzz(url, examples)`` answers
    (tried, 5xx, failures) for the bad-input part."""
    if not options.restart_postgres:
        return await _run(options, options.admin_url, None, fuzz)
    with ThrowawayCluster(keep=options.keep_database) as cluster:
        return await _run(options, cluster.url, cluster, fuzz)


async def _run(
    options: Options,
    admin_url: str,
    cluster: ThrowawayCluster | None,
    fuzz: Callable[[str, int], Awaitable[tuple[int, int, list[str]]]] | None,
) -> Figures:
    """The run, its database created through ``admin_url`` (on ``cluster`` when there is
    one, which the restart fault restarts)."""
    from recap_memory.store import migrate

    name = f"recap_reliability_{uuid.uuid4().hex[:10]}"
    admin = libpq_url(admin_url)
    async with await psycopg.AsyncConnection.connect(admin, autocommit=True) as connection:
        await connection.execute(f'CREATE DATABASE "{name}"')
    database_url = admin_url.rsplit("/", 1)[0] + f"/{name}"
    conninfo = libpq_url(database_url)
    figures = Figures()
    logs = LogFolder("recap-reliability-")
    model = ModelServer(default=Reply(STUB_SUMMARY)).start()
    fleet = Fleet(database_url, model.url, logs.path)
    try:
        await migrate(database_url)
        urls = [fleet.start_server() for _ in range(options.servers)]
        for _ in range(options.workers):
            fleet.start_worker()
        for url in urls:
            if not await _until(functools.partial(_ready, url), 60):
                raise RuntimeError(f"recap serve at {url} did not become ready\n{fleet.logs()}")
        async with httpx.AsyncClient(timeout=30) as http:
            sessions = [
                (await http.post(f"{urls[n % len(urls)]}/sessions", json={})).json()["id"]
                for n in range(options.sessions)
            ]
        progress, load = Progress(options.requests), Load()
        injector = asyncio.create_task(_inject(fleet, model, conninfo, cluster, progress, load))
        elapsed = await _load(urls, sessions, options, progress, load)
        figures.faults = await injector
        await _probe(urls, sessions[0], load)
        settled = await _until(
            functools.partial(_all_settled, urls[0], len(sessions)), options.settle_timeout_s
        )
        for url in urls:
            await _until(functools.partial(_ready, url), 60)
        figures.checks, figures.lost = await _verify(urls[0], conninfo, load, sessions)
        if not settled:
            figures.checks.append(
                Check("settled in time", False, f"{options.settle_timeout_s:.0f} s")
            )
        for fault in figures.faults:
            fault.survived = (
                fault.injected
                and load.acked_after.get(fault.name, 0) > 0
                and all(c.passed for c in figures.checks)
            )
        figures.sent = load.sent
        figures.acknowledged = sum(1 for s in load.acknowledged.values() for _ in s)
        figures.refused = load.refused
        figures.throughput = figures.acknowledged / elapsed if elapsed else 0.0
        figures.p50_ms = _percentile(load.latencies, 0.5) * 1000
        figures.p99_ms = _percentile(load.latencies, 0.99) * 1000
        async with httpx.AsyncClient(timeout=30) as http:
            stats = (await http.get(f"{urls[0]}/stats")).json()["summary"]
        figures.compactions = int(stats["total_summarizations"])
        if fuzz is not None:
            tried, errors, failures = await fuzz(database_url, options.fuzz_examples)
            figures.bad_inputs_tried, figures.bad_input_5xx = tried, errors
            figures.bad_input_failures = failures
        logs.passed = figures.ok
        return figures
    finally:
        fleet.stop()
        model.stop()
        logs.close()
        if not options.keep_database and cluster is None:  # a cluster goes away whole
            async with await psycopg.AsyncConnection.connect(admin, autocommit=True) as connection:
                await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def fuzz_bad_inputs(database_url: str, examples: int) -> tuple[int, int, list[str]]:
    """Fuzz an app on the run's database from its OpenAPI schema, and the ``recap compact``
    parser: (inputs tried, 5xx or crashes, first failures)."""
    from benchmarks.fuzz import fuzz_api, fuzz_compact_parser
    from recap_memory.service import ServiceSettings, create_app

    app = create_app(ServiceSettings(database_url=database_url, embedded_worker=False))
    async with app.router.lifespan_context(app):
        api = await fuzz_api(app, examples=examples)
    parser = await asyncio.to_thread(fuzz_compact_parser, examples=examples * 20)
    failures = [*api.failures, *parser.failures][:10]
    return api.tried + parser.tried, api.server_errors + parser.server_errors, failures


async def _ready(url: str) -> bool:
    async with httpx.AsyncClient(timeout=5) as http:
        return (await http.get(f"{url}/readyz")).status_code == 200
