"""``python -m benchmarks reliability``: recap under load and faults, checked against what
its clients were told.

Two deployments (``database``):

- ``postgres``: ``servers`` × ``recap serve`` and ``workers`` × ``recap worker`` on one
  PostgreSQL database. Faults: model 500s, timeouts, garbage and bad summary texts
  (refusals, chat-template tokens, a reasoning block with no answer); a worker SIGKILLed
  while a pass it leased is provably in flight (the stub model holds the request, the
  session's lease names the worker); the PostgreSQL cluster restarted under load. The
  restart is of a private cluster the run starts for itself
  (:class:`benchmarks.pgcluster.ThrowawayCluster`): the machine's PostgreSQL is never
  stopped. Without the restart (``restart_postgres=False``) the run creates its database
  on ``admin_url`` and restarts nothing.
- ``sqlite``: the embedded deployment — one ``recap serve`` with its embedded worker on a
  SQLite file (one process per file). The same model faults; the server SIGKILLed mid-pass
  and restarted on the same file and port, whose restart must take its dead self's lease
  back (the lease is long: waiting it out would fail the check).

``clients`` clients each own some of the ``sessions`` (plain chat; tool calls, some
split across requests so a call waits open; system and pinned messages) and send
``requests`` turns. Every message carries a unique marker and a client id, every request
an ``Idempotency-Key``; an uncertain answer (503 ``outcome_unknown``, a lost connection, a
timeout) is retried until it is answered, as a real client would, and every answer goes
into a ledger (:mod:`benchmarks.ledger`). Afterwards the checks compare the stored record,
contexts and summaries against that ledger, and against what the stub model served.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import psycopg

from benchmarks.ledger import (
    MARKER,
    Attempt,
    Check,
    Ledger,
    Request,
    Sent,
    check_acknowledged,
    check_chains,
    check_contexts,
    check_no_strangers,
    check_order,
    check_refused_absent,
    check_summary_texts,
    marker,
)
from benchmarks.pgcluster import ThrowawayCluster
from benchmarks.processes import LogFolder, free_port, start_recap
from recap_memory.store.urls import libpq_url
from recap_memory.testing.model_server import (
    Behaviour,
    Garbage,
    Hang,
    ModelServer,
    Reply,
    Status,
)

Database = Literal["postgres", "sqlite"]
STUB_SUMMARY = (
    "**Investigating:** the customer's invoices and tickets.\n"
    "**Key findings:** - several tickets were matched to their invoices.\n"
    "**Current state:** the conversation continues."
)
REFUSAL = "I'm sorry, but I can't summarize this conversation."
TEMPLATE = "<|im_start|>assistant\nThe user asked about invoices.<|im_end|>"
THINK_ONLY = "<think>The user wants a summary of the invoices; let me list them first.</think>"
INJECTED_TEXTS = ("I'm sorry", "<|im_start|>", "<|im_end|>", "<think>", "</think>")
"""Substrings of the bad summary texts the stub model answers: never in a stored summary."""
LLM_TIMEOUT_S = 2.0
LEASE_S = 3.0
SQLITE_LEASE_S = 60.0
"""The SQLite run's lease: long, so that only the restarted server taking back its dead
predecessor's lease (not the lease running out) finishes the killed pass in time."""
KILL_HANG_S = 30.0
KILL_TRIES = 3
WATCH_TIMEOUT_S = 300.0
"""How long after the kill the run waits for the killed pass's session to be compacted."""
RETRY_WINDOW_S = 60.0
"""How long a client keeps retrying a request whose outcome it does not know."""
REQUEST_TIMEOUT_S = 15.0
THRESHOLD_CHARS, KEEP_CHARS = 2_000, 600


@dataclass(frozen=True)
class Options:
    """How big a run is."""

    database: Database = "postgres"
    admin_url: str = "postgresql://postgres@127.0.0.1:5432/postgres"
    """A PostgreSQL database to connect to while creating (and dropping) the run's own;
    unused with ``restart_postgres``, whose run brings a private cluster."""
    servers: int = 2
    workers: int = 3
    clients: int = 32
    sessions: int = 200
    requests: int = 3_200
    """Turns the clients send in all (a turn is one request, or two when a tool call
    waits open between them)."""
    fuzz_examples: int = 25
    settle_timeout_s: float = 180.0
    restart_postgres: bool = True
    """Run on a private PostgreSQL cluster and restart it once under load."""
    keep_database: bool = False
    """Leave the run's database behind for inspection (with ``restart_postgres``: the
    private cluster's directory, stopped; with SQLite: the log folder holds the file)."""

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
    """One fault: how much of it was queued and how much actually hit (consumed), and
    whether the system kept serving after it."""

    name: str
    queued: int = 0
    consumed: int = 0
    survived: bool = False
    detail: str = ""

    @property
    def injected(self) -> bool:
        """A fault counts once something took it: a queued model answer no request got is
        not a fault that happened."""
        return self.consumed > 0


@dataclass
class Figures:
    """Everything a run measured."""

    database: Database = "postgres"
    servers: int = 0
    workers: int = 0
    sent: int = 0
    """Requests (each however often it was retried)."""
    acknowledged: int = 0
    refused: int = 0
    """Requests refused for sure (503 database_unavailable, never acknowledged)."""
    unresolved: int = 0
    """Requests whose outcome stayed unknown after retrying for RETRY_WINDOW_S (must be 0)."""
    attempts: dict[str, int] = field(default_factory=dict)
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
    def failed(self) -> list[str]:
        """The names of the checks that failed, and of a 5xx on bad input."""
        names = [c.name for c in self.checks if not c.passed]
        if self.bad_input_5xx:
            names.append("bad inputs answered without a 5xx")
        return names

    @property
    def ok(self) -> bool:
        """Every check passed (faults consumed and survived among them), no 5xx on bad input."""
        return not self.failed and bool(self.checks)

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-able data."""
        return {**asdict(self), "ok": self.ok, "failed": self.failed}


class Fleet:
    """The recap processes of a run, with their logs."""

    def __init__(self, database: Database, database_url: str, model_url: str, folder: Path):
        self.database = database
        self.database_url = database_url
        self.model_url = model_url
        self.folder = folder
        self.servers: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self.gone: list[subprocess.Popen[bytes]] = []
        self._logs = 0

    def env(self, **extra: str) -> dict[str, str]:
        """The environment every process of the run gets."""
        base = {
            k: v for k, v in os.environ.items() if not k.startswith(("RECAP_", "SUMMAR", "OPENAI"))
        }
        lease = SQLITE_LEASE_S if self.database == "sqlite" else LEASE_S
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
            "RECAP_LEASE_S": str(lease),
            "RECAP_RETRY_BASE_S": "0.5",
            "RECAP_RETRY_MAX_S": "4",
            "RECAP_POLL_INTERVAL_S": "0.2",
            "RECAP_SHUTDOWN_GRACE_S": "5",
            **extra,
        }

    def _start(self, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        self._logs += 1
        return start_recap(args, env, self.folder / f"{self._logs:02d}-{args[0]}.log")

    def _serve(self, port: int) -> subprocess.Popen[bytes]:
        if self.database == "sqlite":  # the embedded deployment: it compacts too
            env = self.env()
        else:
            env = self.env(RECAP_EMBEDDED_WORKER="false", RECAP_MIGRATE_ON_START="false")
        return self._start(["serve", "--port", str(port)], env)

    def start_server(self) -> str:
        """One more ``recap serve``; its base URL."""
        port = free_port()
        self.servers.append((f"http://127.0.0.1:{port}", self._serve(port)))
        return self.servers[-1][0]

    def restart_server(self, index: int) -> None:
        """Start server ``index`` again on its port (after it was killed)."""
        url, old = self.servers[index]
        self.gone.append(old)
        self.servers[index] = (url, self._serve(int(url.rsplit(":", 1)[1])))

    def start_worker(self) -> subprocess.Popen[bytes]:
        """One more ``recap worker``."""
        self.workers.append(self._start(["worker"], self.env()))
        return self.workers[-1]

    def process(self, pid: int) -> subprocess.Popen[bytes] | None:
        """The live process of this run with ``pid``."""
        for process in [p for _, p in self.servers] + self.workers:
            if process.pid == pid and process.poll() is None:
                return process
        return None

    def stop(self) -> None:
        """SIGTERM everything still running, then SIGKILL what does not stop."""
        processes = [p for _, p in self.servers] + self.workers + self.gone
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
    """How many turns are done, awaitable by fraction."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self._changed = asyncio.Event()

    def step(self) -> None:
        """One more turn done."""
        self.done += 1
        self._changed.set()

    async def reach(self, fraction: float) -> None:
        """Wait until ``fraction`` of the turns are done."""
        while self.done < fraction * self.total:
            self._changed.clear()
            await self._changed.wait()


PLAIN, TOOLS, SYSTEM, MIXED = range(4)
KIND_NAMES = ("plain", "tools", "system and pinned", "tools, system and pinned")


@dataclass
class Conversation:
    """One session as the client that owns it sees it."""

    id: str
    kind: int
    number: int
    turns: int = 0
    sent: int = 0
    stopped: bool = False
    """A request of it stayed unresolved (or a call could not be closed): nothing more is
    sent to it."""

    @property
    def tag(self) -> str:
        return self.id.replace("-", "")[:12]

    def message(self, role: str, text: str, **extra: Any) -> tuple[dict[str, Any], Sent]:
        """The next message of the session, marked and with its client id."""
        number, self.sent = self.sent, self.sent + 1
        mark = marker(self.tag, number)
        client_id = f"{self.tag}-{number}"
        body = {"role": role, "content": f"{mark} {text}", "id": client_id, **extra}
        return body, Sent(mark, client_id, role)

    def turn(self) -> list[list[tuple[dict[str, Any], Sent]]]:
        """The next turn's requests: one, or two when its tool call waits open between them."""
        k, self.turns = self.turns, self.turns + 1
        ask = f"Where is invoice {k} of ticket {self.tag}-{k}? Please check the ledger. " * 3
        first: list[tuple[dict[str, Any], Sent]] = []
        if k == 0 and self.kind in (SYSTEM, MIXED):
            first.append(self.message("system", "You help with invoices; answer briefly."))
        if k == 6 and self.kind == SYSTEM:
            first.append(self.message("developer", "From now on, quote the invoice numbers."))
        pinned = {"pinned": True} if self.kind in (SYSTEM, MIXED) and k % 3 == 1 else {}
        first.append(self.message("user", ask, **pinned))
        if self.kind in (TOOLS, MIXED) and k % 2 == 1:
            calls = [f"call_{self.tag}_{k}_{n}" for n in range(2 if k % 4 == 3 else 1)]
            call = self.message(
                "assistant",
                "Looking it up.",
                tool_calls=[
                    {
                        "id": c,
                        "type": "function",
                        "function": {"name": "find_invoice", "arguments": f'{{"n": {k}}}'},
                    }
                    for c in calls
                ],
            )
            results = [
                self.message(
                    "tool",
                    f"invoice {k}: paid on day {k % 28}, amount {k * 7} EUR. " * 3,
                    tool_call_id=c,
                )
                for c in calls
            ]
            answer = self.message("assistant", f"Invoice {k} was paid on day {k % 28}. " * 3)
            if k % 4 == 1:  # the call waits open between two requests
                return [[*first, call], [*results, answer]]
            return [[*first, call, *results, answer]]
        first.append(self.message("assistant", f"Invoice {k} was paid on day {k % 28}. " * 4))
        return [first]


@dataclass
class Load:
    """What the clients sent and were told."""

    ledger: Ledger = field(default_factory=Ledger)
    latencies: list[float] = field(default_factory=list)
    acked_after: dict[str, int] = field(default_factory=dict)
    """Acknowledged requests after each fault (by name): the system kept serving."""

    def acknowledged(self) -> None:
        for name in self.acked_after:
            self.acked_after[name] += 1


async def _attempt(
    http: httpx.AsyncClient, url: str, messages: list[dict[str, Any]], key: str
) -> Attempt:
    """One try of an append, classified."""
    try:
        response = await http.post(
            url, json={"messages": messages}, headers={"Idempotency-Key": key}
        )
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout):
        return Attempt("connect")
    except httpx.TimeoutException:
        return Attempt("timeout")
    except httpx.TransportError:
        return Attempt("unknown")  # sent, and the connection lost before the answer
    if response.status_code == 201:
        body = response.json()
        return Attempt(
            "acknowledged",
            201,
            ids=[int(i) for i in body["ids"]],
            held=int(body.get("held", 0)),
            replayed=response.headers.get("idempotent-replayed") == "true",
        )
    try:
        code = str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        code = None
    if response.status_code == 503 and code == "database_unavailable":
        return Attempt("refused", 503, code)
    if response.status_code == 503 and code == "outcome_unknown":
        return Attempt("unknown", 503, code)
    return Attempt("unexpected", response.status_code, code)


async def _send(
    http: httpx.AsyncClient,
    urls: list[str],
    conversation: Conversation,
    messages: list[tuple[dict[str, Any], Sent]],
    load: Load,
    *,
    must: bool,
) -> Request:
    """Send one request until it is answered: an uncertain outcome is retried with the same
    key (the third try under a fresh key, as a client that lost it: the message ids must
    keep it from appending twice); a sure refusal ends it unless ``must`` (it closes a
    tool call left open)."""
    request = Request(conversation.id, [sent for _, sent in messages])
    load.ledger.requests.append(request)
    bodies = [body for body, _ in messages]
    key = uuid.uuid4().hex
    deadline = time.monotonic() + RETRY_WINDOW_S
    tries = 0
    while True:
        url = (
            f"{urls[(conversation.number + tries) % len(urls)]}/sessions/{conversation.id}/messages"
        )
        fresh = tries == 2 and request.outcome == "unresolved"
        if fresh:
            key = uuid.uuid4().hex
        started = time.perf_counter()
        attempt = await _attempt(http, url, bodies, key)
        attempt.fresh_key = fresh
        request.attempts.append(attempt)
        if attempt.kind == "acknowledged":
            load.latencies.append(time.perf_counter() - started)
            load.acknowledged()
            return request
        if attempt.kind == "unexpected":
            return request
        if attempt.kind == "refused" and not must and request.outcome == "refused":
            return request
        if time.monotonic() > deadline:
            return request
        tries += 1
        await asyncio.sleep(min(2.0, 0.1 * 2**tries))


async def _load(
    urls: list[str],
    conversations: list[Conversation],
    options: Options,
    progress: Progress,
    load: Load,
) -> float:
    """Run the clients (each owns every ``clients``-th session); returns the wall time."""
    counter = iter(range(options.requests))

    async def client(number: int) -> None:
        own = conversations[number :: options.clients]
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S) as http:
            for k in counter:
                live = [c for c in own if not c.stopped]
                if not live:
                    progress.step()
                    continue
                conversation = live[k % len(live)]
                for n, messages in enumerate(conversation.turn()):
                    request = await _send(http, urls, conversation, messages, load, must=n > 0)
                    if request.outcome != "acknowledged":
                        conversation.stopped = request.outcome == "unresolved" or n > 0
                        break
                progress.step()

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(options.clients)))
    return time.perf_counter() - started


def _lease_owner(database_url: str, conninfo: str | None, session: str) -> str | None:
    """Who holds the session's compaction lease now, read from the database."""
    query = "SELECT lease_owner FROM sessions WHERE uuid = {}"
    if conninfo is not None:
        with psycopg.connect(conninfo, autocommit=True) as connection:
            row = connection.execute(query.format("%s"), (session,)).fetchone()
    else:
        path = database_url.removeprefix("sqlite:///")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as connection:
            row = connection.execute(query.format("?"), (session,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def _session_of(body: Any, conversations: list[Conversation]) -> str | None:
    """The session whose messages a model request summarizes (by their markers)."""
    tags = {c.tag: c.id for c in conversations}
    for found in MARKER.finditer(str(body)):
        if found.group(1) in tags:
            return tags[found.group(1)]
    return None


async def _newest_row(url: str, session: str) -> int:
    """The id of the session's newest summary row (superseded ones too), 0 when none."""
    async with httpx.AsyncClient(timeout=10) as http:
        rows = await http.get(
            f"{url}/sessions/{session}/summaries", params={"include_superseded": "true"}
        )
        if rows.status_code != 200:  # the database restarting (503): no answer yet
            return 0
        return max((int(r["id"]) for r in rows.json()), default=0)


@dataclass
class Kill:
    """What the SIGKILL mid-pass found and when the killed pass was finished."""

    fault: Fault
    session: str | None = None
    killed_at: float = 0.0
    rows_before: int = 0
    """The newest summary row's id at the kill."""
    recovered_s: float | None = None
    evidence: str = ""
    must_reclaim_s: float | None = None
    watch: asyncio.Task[None] | None = None
    """Waits, from the kill on, for the session's next summary row."""
    """With SQLite: the lease, which the restarted server must not wait out."""


async def _kill_mid_pass(
    fleet: Fleet,
    model: ModelServer,
    conversations: list[Conversation],
    conninfo: str | None,
    load: Load,
) -> Kill:
    """:func:`_try_kill`, tried again (up to 3 times) when the held pass was over before its
    holder could be found (its lease gone: nothing was killed)."""
    for _ in range(KILL_TRIES):
        kill = await _try_kill(fleet, model, conversations, conninfo, load)
        if kill.session is not None:
            return kill
    kill.fault.detail += f" ({KILL_TRIES} tries)"
    return kill


async def _try_kill(
    fleet: Fleet,
    model: ModelServer,
    conversations: list[Conversation],
    conninfo: str | None,
    load: Load,
) -> Kill:
    """Hold the next model request (a pass is then in flight), find the process whose
    lease covers that session, SIGKILL it, and replace it (a new worker; with SQLite the
    server restarted on the same file and port)."""
    name = "SIGKILL mid-pass"
    kill = Kill(Fault(name, queued=1))
    hang = Hang(KILL_HANG_S)
    start = len(model.served)
    model.then(hang, hang)  # the pass's first try and its retry: both held
    deadline = time.monotonic() + 30
    held = None
    while held is None and time.monotonic() < deadline:
        held = next((r for r, b in model.served[start:] if b == hang), None)
        await asyncio.sleep(0.02)
    if held is None:
        kill.fault.detail = "no pass called the model within 30 s"
        return kill
    seen = time.monotonic()
    session = _session_of(held.body, conversations)
    if session is not None:
        kill.rows_before = await _newest_row(fleet.servers[0][0], session)
    # read the lease and kill its holder with nothing awaited in between
    owner = _lease_owner(fleet.database_url, conninfo, session) if session else None
    read = time.monotonic()
    pid = int(owner.split(":")[1]) if owner and owner.split(":")[1].isdigit() else None
    process = fleet.process(pid) if pid is not None else None
    if session is None or process is None:
        kill.fault.detail = (
            f"the held request's session {session} has no live lease holder ({owner})"
        )
        return kill
    kill.session = session
    process.send_signal(signal.SIGKILL)
    kill.killed_at = time.monotonic()
    kill.watch = asyncio.create_task(_watch_recovery(fleet.servers[0][0], kill, WATCH_TIMEOUT_S))
    await asyncio.to_thread(process.wait)
    kill.fault.consumed = 1
    role = "worker" if process in fleet.workers else "server"
    kill.evidence = (
        f"pass in flight (its model request held since {kill.killed_at - seen:.2f} s before "
        f"the kill; the lease of {session[:8]} held by the {role}, pid {pid}, "
        f"{kill.killed_at - read:.3f} s before the kill)"
    )
    if role == "worker":
        fleet.workers.remove(process)
        fleet.gone.append(process)
        fleet.start_worker()
    else:
        fleet.restart_server(0)
        kill.must_reclaim_s = SQLITE_LEASE_S
    kill.fault.detail = f"the {role} holding the lease of {session[:8]} mid-pass"
    load.acked_after[name] = 0
    return kill


async def _watch_recovery(url: str, kill: Kill, timeout: float) -> None:
    """Wait until the killed pass's session gets a summary row newer than any before the
    kill (another process compacted it), and note after how long."""
    if kill.session is None:
        return
    session = kill.session

    async def compacted() -> bool:
        return await _newest_row(url, session) > kill.rows_before

    if await _until(compacted, timeout):
        kill.recovered_s = time.monotonic() - kill.killed_at


@dataclass
class ModelFault:
    """A run of bad model answers, counted from what the stub actually served."""

    name: str
    behaviour: Behaviour
    count: int
    detail: str


MODEL_FAULTS = (
    (0.10, [ModelFault("model 500s", Status(500), 6, "answers of HTTP 500")]),
    (
        0.20,
        [ModelFault("model timeouts", Hang(LLM_TIMEOUT_S + 1), 3, "answers hung past the timeout")],
    ),
    (
        0.30,
        [
            ModelFault("summary refusals", Reply(REFUSAL), 2, "\"I'm sorry, but I can't …\""),
            ModelFault("chat-template tokens", Reply(TEMPLATE), 2, "<|im_start|> … <|im_end|>"),
            ModelFault("reasoning only", Reply(THINK_ONLY), 2, "<think>…</think> and nothing else"),
        ],
    ),
    (0.55, [ModelFault("model garbage", Garbage(), 4, "answers that are not JSON")]),
)
KILL_AT, RESTART_AT = 0.40, 0.70


async def _inject(
    fleet: Fleet,
    model: ModelServer,
    conversations: list[Conversation],
    conninfo: str | None,
    cluster: ThrowawayCluster | None,
    progress: Progress,
    load: Load,
) -> tuple[list[ModelFault], Kill, Fault | None]:
    """The faults, in order, at fixed fractions of the load."""
    queued: list[ModelFault] = []
    kill: Kill | None = None
    restart: Fault | None = None
    steps: list[tuple[float, Any]] = [*MODEL_FAULTS, (KILL_AT, "kill")]
    if cluster is not None:
        steps.append((RESTART_AT, "restart"))
    for at, what in sorted(steps, key=lambda s: s[0]):
        await progress.reach(at)
        if what == "kill":
            kill = await _kill_mid_pass(fleet, model, conversations, conninfo, load)
        elif what == "restart":
            assert isinstance(cluster, ThrowawayCluster)  # never the machine's cluster
            restart = Fault("PostgreSQL restart", queued=1)
            load.acked_after[restart.name] = 0
            started = time.monotonic()
            await asyncio.to_thread(cluster.restart)
            restart.consumed = 1
            restart.detail = (
                f"the run's own cluster on port {cluster.port}, down and up in "
                f"{time.monotonic() - started:.1f} s"
            )
        else:
            interleaved = [
                f.behaviour for n in range(max(f.count for f in what)) for f in what if n < f.count
            ]
            model.then(*interleaved)
            for fault in what:
                queued.append(fault)
                load.acked_after[fault.name] = 0
    assert kill is not None
    return queued, kill, restart


async def _probe(urls: list[str], conversations: list[Conversation], load: Load) -> None:
    """After the faults, one plain turn through every server (retried while it recovers)."""
    async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S) as http:
        for n, url in enumerate(urls):
            live = [c for c in conversations if not c.stopped and c.kind == PLAIN]
            if not live:
                return
            conversation = live[n % len(live)]
            for messages in conversation.turn()[:1]:
                await _send(http, [url], conversation, messages, load, must=True)


async def _until(check: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if await check():
                return True
        except (httpx.TransportError, psycopg.Error, ValueError, KeyError):
            pass
        await asyncio.sleep(0.25)
    return False


async def _sessions(url: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(timeout=30) as http:
        listed: list[dict[str, Any]] = []
        while True:
            page = await http.get(f"{url}/sessions", params={"limit": 200, "offset": len(listed)})
            items = page.json()["items"]
            listed += items
            if len(items) < 200:
                return listed


async def _all_settled(url: str) -> bool:
    return all(not s["due"] and not s["compacting"] for s in await _sessions(url))


@dataclass
class Stored:
    """What the API shows after the run, per session."""

    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    summaries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


async def _read(url: str, sessions: list[str]) -> Stored:
    stored = Stored()
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
            stored.records[session] = record
            stored.contexts[session] = (await http.get(f"/sessions/{session}/context")).json()
            stored.summaries[session] = (
                await http.get(
                    f"/sessions/{session}/summaries", params={"include_superseded": "true"}
                )
            ).json()
    return stored


def _fault_checks(
    model: ModelServer, queued: list[ModelFault], kill: Kill, restart: Fault | None
) -> tuple[list[Fault], list[Check]]:
    """The faults as they were consumed, and the checks on them."""
    faults: list[Fault] = []
    for fault in queued:
        served = model.served_count(fault.behaviour)
        faults.append(Fault(fault.name, fault.count, min(served, fault.count), detail=fault.detail))
    faults.append(kill.fault)
    if restart is not None:
        faults.append(restart)
    unconsumed = [f"{f.name} {f.queued - f.consumed}" for f in faults if f.consumed < f.queued]
    detail = ", ".join(f"{f.name} {f.consumed}/{f.queued}" for f in faults)
    if unconsumed:
        detail += f"; queued but never consumed (not counted): {', '.join(unconsumed)}"
    checks = [Check("faults consumed", all(f.injected for f in faults), detail)]
    if kill.session is None:
        checks.append(Check("SIGKILL mid-pass", False, kill.fault.detail))
    else:
        recovered = kill.recovered_s is not None
        detail = kill.evidence + (
            f", compacted by another process after {kill.recovered_s:.1f} s"
            if kill.recovered_s is not None
            else ", never compacted afterwards"
        )
        if kill.must_reclaim_s is not None:
            recovered = recovered and (kill.recovered_s or 0) < kill.must_reclaim_s
            detail += f" (the lease is {kill.must_reclaim_s:.0f} s: taken back, not waited out)"
        checks.append(Check("SIGKILL mid-pass", recovered, detail))
    return faults, checks


def _checks(
    load: Load, stored: Stored, model: ModelServer, settled: bool, timeout: float
) -> list[Check]:
    """The checks against the ledger and the stub model, on what the API shows."""
    ledger = load.ledger
    good = [
        b.text for _, b in list(model.served) if isinstance(b, Reply) and b.text == STUB_SUMMARY
    ]
    rows = sum(len(c) for c in stored.summaries.values())
    unexpected = ledger.unexpected()
    unresolved = ledger.of("unresolved")
    attempts = ledger.attempts()
    due = [s for s, c in stored.contexts.items() if c.get("due")]
    return [
        check_acknowledged(ledger, stored.records),
        check_refused_absent(ledger, stored.records),
        check_no_strangers(ledger, stored.records),
        check_order(ledger, stored.records),
        Check(
            "every answer expected",
            not unexpected,
            f"{sum(attempts.values()):,} attempts: "
            + ", ".join(f"{n} {k}" for k, n in sorted(attempts.items()))
            + (f"; unexpected: {', '.join(unexpected[:3])}" if unexpected else ""),
        ),
        Check(
            "every uncertain outcome resolved by retrying",
            not unresolved,
            f"{sum(1 for r in ledger.requests if len(r.attempts) > 1)} requests retried, "
            f"{sum(1 for r in ledger.requests for a in r.attempts if a.replayed)} answers "
            f"replayed, {sum(1 for r in ledger.requests for a in r.attempts if a.held)} with "
            f"held messages, {len(unresolved)} unresolved after {RETRY_WINDOW_S:.0f} s",
        ),
        check_contexts(stored.records, stored.contexts, stored.summaries),
        check_chains(stored.records, stored.summaries),
        check_summary_texts(stored.summaries, good[:1] or [STUB_SUMMARY], INJECTED_TEXTS),
        Check(
            "every summary row is a model answer",
            rows <= len(good),
            f"{rows} summary rows, {len(good)} good answers served",
        ),
        Check(
            "every due session compacted",
            settled and not due,
            f"{len(due)} still due" + ("" if settled else f" after {timeout:.0f} s"),
        ),
    ]


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
    if options.database == "sqlite":
        return await _run(options, None, None, fuzz)
    if not options.restart_postgres:
        return await _run(options, options.admin_url, None, fuzz)
    with ThrowawayCluster(keep=options.keep_database) as cluster:
        return await _run(options, cluster.url, cluster, fuzz)


async def _run(
    options: Options,
    admin_url: str | None,
    cluster: ThrowawayCluster | None,
    fuzz: Callable[[str, int], Awaitable[tuple[int, int, list[str]]]] | None,
) -> Figures:
    """The run, its PostgreSQL database created through ``admin_url`` (on ``cluster`` when
    there is one, which the restart fault restarts), or a SQLite file when None."""
    from recap_memory.store import migrate

    logs = LogFolder(f"recap-reliability-{options.database}-")
    name = f"recap_reliability_{uuid.uuid4().hex[:10]}"
    admin = libpq_url(admin_url) if admin_url is not None else None
    if admin_url is not None and admin is not None:
        async with await psycopg.AsyncConnection.connect(admin, autocommit=True) as connection:
            await connection.execute(f'CREATE DATABASE "{name}"')
        database_url = admin_url.rsplit("/", 1)[0] + f"/{name}"
        conninfo: str | None = libpq_url(database_url)
    else:
        database_url = f"sqlite:///{logs.path / 'recap.db'}"
        conninfo = None
    sqlite = options.database == "sqlite"
    figures = Figures(
        database=options.database,
        servers=1 if sqlite else options.servers,
        workers=0 if sqlite else options.workers,
    )
    model = ModelServer(default=Reply(STUB_SUMMARY)).start()
    fleet = Fleet(options.database, database_url, model.url, logs.path)
    try:
        await migrate(database_url)
        urls = [fleet.start_server() for _ in range(figures.servers)]
        for _ in range(figures.workers):
            fleet.start_worker()
        for url in urls:
            if not await _until(functools.partial(_ready, url), 60):
                raise RuntimeError(f"recap serve at {url} did not become ready\n{fleet.logs()}")
        async with httpx.AsyncClient(timeout=30) as http:
            conversations = [
                Conversation(
                    (await http.post(f"{urls[n % len(urls)]}/sessions", json={})).json()["id"],
                    kind=n % 4,
                    number=n,
                )
                for n in range(options.sessions)
            ]
        progress, load = Progress(options.requests), Load()
        injector = asyncio.create_task(
            _inject(fleet, model, conversations, conninfo, cluster, progress, load)
        )
        elapsed = await _load(urls, conversations, options, progress, load)
        queued, kill, restart = await injector
        await _probe(urls, conversations, load)
        if kill.watch is not None:
            await kill.watch
        settled = await _until(functools.partial(_all_settled, urls[0]), options.settle_timeout_s)
        for url in urls:
            await _until(functools.partial(_ready, url), 60)
        stored = await _read(urls[0], [c.id for c in conversations])
        figures.checks = _checks(load, stored, model, settled, options.settle_timeout_s)
        figures.faults, fault_checks = _fault_checks(model, queued, kill, restart)
        figures.checks += fault_checks
        passed = all(c.passed for c in figures.checks)
        for fault in figures.faults:
            fault.survived = fault.injected and load.acked_after.get(fault.name, 0) > 0 and passed
        ledger = load.ledger
        figures.sent = len(ledger.requests)
        figures.acknowledged = len(ledger.of("acknowledged"))
        figures.refused = len(ledger.of("refused"))
        figures.unresolved = len(ledger.of("unresolved"))
        figures.attempts = dict(ledger.attempts())
        figures.throughput = figures.acknowledged / elapsed if elapsed else 0.0
        figures.p50_ms = _percentile(load.latencies, 0.5) * 1000
        figures.p99_ms = _percentile(load.latencies, 0.99) * 1000
        figures.compactions = sum(1 for chain in stored.summaries.values() for row in chain)
        if fuzz is not None:
            fuzz_url = database_url if not sqlite else f"sqlite:///{logs.path / 'fuzz.db'}"
            tried, errors, failures = await fuzz(fuzz_url, options.fuzz_examples)
            figures.bad_inputs_tried, figures.bad_input_5xx = tried, errors
            figures.bad_input_failures = failures
        logs.passed = figures.ok and not options.keep_database
        return figures
    finally:
        fleet.stop()
        model.stop()
        logs.close()
        if admin is not None and not options.keep_database and cluster is None:
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
