"""Bad-input fuzzing: the HTTP API from its OpenAPI schema (schemathesis) and the
``recap compact`` input parser (hypothesis). Neither may ever answer bad input with a
crash: the API with no 5xx, the parser with nothing but an :class:`~recap_memory.errors.InputError`
(exit code 2, one line on stderr, no output file).

- :func:`fuzz_api` takes the FastAPI app **with its lifespan already running in the calling
  event loop** (as ``tests/service/conftest.py``'s ``running_app`` does, or inside
  ``app.router.lifespan_context(app)``). Schemathesis generates the cases and judges the
  responses; the requests go through ``httpx.ASGITransport`` in this event loop, because
  schemathesis' own ASGI transport runs the app in a thread of its own with a second
  lifespan, where the database engine and its connections (made in the first loop) cannot
  be used. Hypothesis runs in a worker thread; each case is sent on the app's loop.
- :func:`fuzz_compact_parser` runs ``recap compact FILE -o OUT`` in-process (Typer's
  ``CliRunner``) on generated documents.

Both need the ``bench`` extra (``pip install 'recap-memory[bench]'``); they import schemathesis
and hypothesis only when called.
"""

from __future__ import annotations

import asyncio
import json
import logging
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from recap_memory.errors import ConfigurationError, InputError
from recap_memory.messages import from_openai, is_valid_history

if TYPE_CHECKING:
    from recap_memory.store import Store

MAX_FAILURES = 10
"""How many failure descriptions a report keeps (all are counted)."""
BASE_URL = "http://127.0.0.1:8000"
"""A loopback host: without API keys the service answers no other name."""
SKIPPED_OPERATIONS = {
    "GET /sessions/{session_id}/events": (
        "an endless Server-Sent Events stream: a request on an existing session never "
        "finishes, so it cannot be fuzzed request by request"
    ),
}
"""Operations :func:`fuzz_api` leaves out, with why."""
REQUEST_TIMEOUT_S = 30.0
"""A case without an answer by then counts as a server error."""
CALL_IDS = ("call_1", "call_2", "call_3")
"""The tool-call ids generated messages use, so that calls and results sometimes pair."""
INSTALL_HINT = "pip install 'recap-memory[bench]'"
ODD_CHARACTERS = ("\x00", "\ud800", "\udfff", "\ufeff", "\u2028", "\x7f", "\U0001f600")
"""Characters generated text favours: NUL, lone surrogates, a BOM, a line separator, ..."""


@dataclass
class FuzzReport:
    """What a fuzzing run found."""

    tried: int = 0
    """Cases sent (API) or documents parsed (``recap compact``)."""
    server_errors: int = 0
    """5xx answers or requests without an answer (API); crashes (parser)."""
    failures: list[str] = field(default_factory=list)
    """Short descriptions of the first :data:`MAX_FAILURES` problems, one per kind (an
    operation answering 500 a hundred times is described once, counted a hundred times)."""
    problems: int = 0
    """Every problem counted, server errors included (``failures`` keeps the first few)."""
    skipped: list[str] = field(default_factory=list)
    """Operations not fuzzed, each with why."""
    _kinds: set[str] = field(default_factory=set, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """No problem at all."""
        return self.problems == 0

    def fail(
        self, description: str, *, server_error: bool = False, kind: str | None = None
    ) -> None:
        """Count one problem; keep its description while there are few and none of the same
        ``kind`` (say, the operation and the status) is kept yet."""
        self.problems += 1
        if server_error:
            self.server_errors += 1
        if kind is not None:
            if kind in self._kinds:
                return
            self._kinds.add(kind)
        if len(self.failures) < MAX_FAILURES:
            self.failures.append(description[:500])


# shared generators ---------------------------------------------------------------------------


def _imports() -> tuple[Any, Any]:
    """hypothesis and its strategies module, or a ConfigurationError saying what to install."""
    try:
        import hypothesis
        from hypothesis import strategies
    except ImportError as exc:  # pragma: no cover - the bench extra is installed in CI
        raise ConfigurationError(f"fuzzing needs hypothesis: {INSTALL_HINT}") from exc
    return hypothesis, strategies


def _settings(hypothesis: Any, examples: int) -> Any:
    """Hypothesis settings for a fuzzing run: no deadline, no example database, quiet."""
    if examples < 1:
        raise ConfigurationError(f"examples must be at least 1, got {examples}")
    return hypothesis.settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(hypothesis.HealthCheck),
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        verbosity=hypothesis.Verbosity.quiet,
        print_blob=False,
    )


def _run(
    hypothesis: Any,
    settings: Any,
    seed: int | None,
    strategy: Any,
    body: Callable[..., None],
    explicit: Sequence[Any] = (),
) -> None:
    """Run ``body`` on ``strategy``'s examples (``explicit`` ones first) under ``settings``."""
    test = hypothesis.given(strategy)(body)
    for value in reversed(explicit):
        test = hypothesis.example(value)(test)
    test = settings(test)
    if seed is not None:
        test = hypothesis.seed(seed)(test)
    test()


def message_strategies(st: Any, *, allow_nan: bool = True) -> tuple[Any, Any, Any]:
    """Strategies of (any JSON value, one message-like dict, a list of messages shaped like
    a history: turns and tool-call groups whose results may be missing, doubled or wrong,
    now and then with a message-like dict among them)."""
    odd = st.one_of(st.sampled_from(ODD_CHARACTERS), st.characters(exclude_categories=()))
    text = st.one_of(st.text(max_size=30), st.text(odd, max_size=8))
    scalar = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=allow_nan, allow_infinity=allow_nan),
        text,
    )
    values = st.recursive(
        scalar,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)
        ),
        max_leaves=10,
    )
    deep = st.integers(min_value=1, max_value=990).map(_nested)
    call_id = st.one_of(st.sampled_from(CALL_IDS), text)
    role = st.one_of(st.sampled_from(["system", "user", "assistant", "tool"]), values)
    part = st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(["text", "image_url", "thinking"]), values)},
        optional={"text": st.one_of(text, values), "thinking": text},
    )
    content = st.one_of(text, st.none(), st.lists(part, max_size=3), values)
    call = st.one_of(
        st.fixed_dictionaries(
            {
                "id": call_id,
                "type": st.just("function"),
                "function": st.fixed_dictionaries(
                    {"name": st.one_of(text, values)},
                    optional={"arguments": st.one_of(text, values)},
                ),
            }
        ),
        values,
    )
    message = st.fixed_dictionaries(
        {"role": role},
        optional={
            "content": content,
            "tool_calls": st.one_of(st.lists(call, max_size=3), values),
            "tool_call_id": st.one_of(call_id, values),
            "name": st.one_of(text, values),
            "id": st.one_of(st.integers(), text, values),
            "pinned": st.one_of(st.booleans(), values),
            "reasoning_content": st.one_of(text, values),
            "metadata": deep,
        },
    )

    plain = st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user", "assistant"]), "content": text}
    ).map(lambda m: [m])

    @st.composite  # type: ignore[untyped-decorator]
    def tool_group(draw: Callable[[Any], Any]) -> list[dict[str, Any]]:
        ids = draw(st.lists(st.sampled_from(CALL_IDS), min_size=1, max_size=3, unique=True))
        calls = [
            {"id": i, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
            for i in ids
        ]
        answered = draw(
            st.one_of(
                st.permutations(ids),  # every call answered once: valid
                st.lists(st.sampled_from([*CALL_IDS, "call_x"]), max_size=4),
            )
        )
        results = [{"role": "tool", "tool_call_id": i, "content": draw(text)} for i in answered]
        return [{"role": "assistant", "content": None, "tool_calls": calls}, *results]

    def flat(groups: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        return [m for g in groups for m in g]

    shaped = st.lists(st.one_of(plain, tool_group()), min_size=1, max_size=6).map(flat)
    mixed = st.lists(
        st.one_of(plain, tool_group(), message.map(lambda m: [m])), min_size=1, max_size=6
    ).map(flat)
    return values, message, st.one_of(shaped, mixed)


def _nested(depth: int) -> list[Any]:
    """``[[[...]]]``, ``depth`` lists deep."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


# the HTTP API --------------------------------------------------------------------------------

_DEEP = "[" * 300 + "]" * 300
_APPEND = "/sessions/{session}/messages"
_PROBES: tuple[tuple[str, str, str | None], ...] = (
    ("POST", "/sessions", '{"title": "probe: NUL \\u0000 in a title"}'),
    ("POST", "/sessions", '{"title": "probe: lone surrogate", "metadata": {"k": "\\ud800"}}'),
    ("POST", "/sessions", '{"title": "probe: deep metadata", "metadata": {"k": ' + _DEEP + "}}"),
    ("POST", "/sessions", '{"title": "probe: NaN metadata", "metadata": {"k": NaN}}'),
    ("POST", "/sessions", "[" * 50_000 + "]" * 50_000),
    ("GET", "/sessions?offset=9223372036854775808", None),
    ("GET", "/sessions/probe%00nul", None),
    ("GET", "/sessions/{session}/messages?after=9223372036854775808", None),
    ("POST", _APPEND, '{"messages": [{"role": "user", "content": "\\u0000"}]}'),
    ("POST", _APPEND, '{"messages": [{"role": "user", "content": "\\ud800"}]}'),
    ("POST", _APPEND, '{"messages": [{"role": "user", "k": NaN}]}'),
    ("POST", _APPEND, '{"messages": [{"role": "user", "k": ' + _DEEP + "}]}"),
    ("POST", _APPEND, '{"messages": [{"role": "user", "id": 1' + "0" * 30 + "}]}"),
)  # fmt: skip
"""Requests :func:`fuzz_api` sends after the generated cases (what they store would make
the listing fail for the cases after them): characters and numbers a database or a JSON
encoder may refuse (NUL, a lone surrogate, NaN, integers past 64 bits, deep nesting). Each
``{session}`` is a new session of its own; whether what a probe stored can be read back is
checked with every other session at the end."""


async def fuzz_api(
    app: Any,
    *,
    examples: int,
    seed: int | None = None,
    headers: dict[str, str] | None = None,
    sessions: int = 3,
    operations: Collection[str] | None = None,
    probes: bool = True,
) -> FuzzReport:
    """Fuzz every operation of ``app``'s OpenAPI schema (but :data:`SKIPPED_OPERATIONS`).

    ``app`` is the FastAPI app with its lifespan running in this event loop (see the module
    docstring). Each operation gets up to ``examples`` cases of positive data (valid by the
    schema) and as many of negative data (violating it); hypothesis stops early on an
    operation with fewer distinct cases. An operation with a ``{session_id}`` gets, for
    about half its cases, one of ``sessions`` real sessions created here (with messages
    and a tool call; ``DELETE`` gets sessions of its own and runs last), and
    ``POST /sessions/{session_id}/messages`` also gets generated histories. ``headers`` go
    with every request (an ``Authorization`` when the app has API keys); ``operations``
    limits the run to those labels (``"GET /sessions"``); ``probes`` sends :data:`_PROBES`
    after the generated cases.

    A problem is a 5xx or no answer (``server_errors``), a response that does not match its
    declared schema or content type, and, at the end, a session whose counters disagree
    with its stored messages, whose context is not a valid history, or whose messages or
    context cannot be read (a partial or poisoned write).
    """
    hypothesis, st = _imports()
    try:
        import schemathesis
        from schemathesis.core.failures import FailureGroup
        from schemathesis.core.result import Err
        from schemathesis.specs.openapi.checks import (
            content_type_conformance,
            response_schema_conformance,
        )
    except ImportError as exc:  # pragma: no cover - the bench extra is installed in CI
        raise ConfigurationError(f"API fuzzing needs schemathesis: {INSTALL_HINT}") from exc
    state = getattr(app.state, "recap", None)
    if state is None:
        raise ConfigurationError("fuzz_api needs the app's lifespan running (the store is opened)")
    settings = _settings(hypothesis, examples)
    report = FuzzReport()
    loop = asyncio.get_running_loop()
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE_URL, headers=headers or {}, timeout=REQUEST_TIMEOUT_S
    ) as client:
        kept = [await _seed_session(client, f"fuzz {n}") for n in range(sessions)]
        victims = [await _seed_session(client, f"fuzz delete {n}") for n in range(sessions)]
        schema = schemathesis.openapi.from_dict(app.openapi())
        _, _, history = message_strategies(st, allow_nan=False)
        checks = [response_schema_conformance, content_type_conformance]
        plans = []
        for result in schema.get_all_operations():
            if isinstance(result, Err):
                report.fail(f"an operation schemathesis cannot read: {result.err()}")
                continue
            operation = result.ok()
            if operations is not None and operation.label not in operations:
                continue
            if operation.label in SKIPPED_OPERATIONS:
                report.skipped.append(f"{operation.label}: {SKIPPED_OPERATIONS[operation.label]}")
                continue
            pool = victims if operation.method == "delete" else kept
            plans.append((operation.method == "delete", operation, pool))
        plans.sort(key=lambda plan: plan[0])  # DELETE last: it removes what the rest reads

        def send(case: Any) -> None:
            try:
                request = _prepared(case)
            except Exception:  # a case `requests` cannot encode: nothing is sent
                return
            report.tried += 1
            future = asyncio.run_coroutine_threadsafe(_call(client, request), loop)
            try:
                response = future.result(REQUEST_TIMEOUT_S + 5)
            except Exception as exc:
                future.cancel()
                report.fail(
                    f"{_describe(request)} -> no answer: {exc!r}",
                    server_error=True,
                    kind=f"{case.operation.label} no answer",
                )
                return
            kind = f"{case.operation.label} {response.status_code}"
            if response.status_code >= 500:
                report.fail(
                    f"{_describe(request)} -> {response.status_code} {response.text[:200]}",
                    server_error=True,
                    kind=kind,
                )
                return
            try:
                case.validate_response(
                    response, checks=checks, transport_kwargs={"base_url": BASE_URL}
                )
            except FailureGroup as group:
                titles = "; ".join(sorted({f.title for f in group.exceptions}))
                report.fail(
                    f"{_describe(request)} -> {response.status_code}: {titles}",
                    kind=f"{kind} {titles}",
                )

        def run_all() -> None:
            for _, operation, pool in plans:
                modes = [schemathesis.GenerationMode.POSITIVE]
                if _negatable(operation):
                    modes.append(schemathesis.GenerationMode.NEGATIVE)
                for mode in modes:
                    strategy = _operation_strategy(st, operation, mode, pool, history)
                    try:
                        _run(hypothesis, settings, seed, strategy, send)
                    except Exception as exc:  # the generator itself gave up
                        if not _unsatisfiable(hypothesis, exc):
                            report.fail(f"{operation.label} ({mode.value}): {exc!r}")

        await asyncio.to_thread(run_all)
        if probes:
            await _probe(client, report)
        await _check_records(client, state.store, kept[0] if kept else None, report)
    return report


async def _seed_session(client: httpx.AsyncClient, title: str) -> str:
    """A session with a few turns and an answered tool call, for the fuzzer to aim at."""
    created = await client.post("/sessions", json={"title": title})
    created.raise_for_status()
    session = str(created.json()["id"])
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": f"{title}: what is ticket 7?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ticket 7 is open"},
        {"role": "assistant", "content": "Ticket 7 is open."},
    ]
    appended = await client.post(f"/sessions/{session}/messages", json={"messages": messages})
    appended.raise_for_status()
    return session


async def _probe(client: httpx.AsyncClient, report: FuzzReport) -> None:
    """Send :data:`_PROBES`; a 5xx is a server error."""
    for method, path, body in _PROBES:
        if "{session}" in path:
            title = f"probe: {(body or '')[:60]}"
            path = path.format(session=await _seed_session(client, title))
        request = _Request(
            method,
            BASE_URL + path,
            {"content-type": "application/json"} if body is not None else {},
            body.encode() if body is not None else None,
        )
        report.tried += 1
        try:
            response = await _call(client, request)
        except Exception as exc:
            report.fail(f"{_describe(request)} -> no answer: {exc!r}", server_error=True)
            continue
        if response.status_code >= 500:
            report.fail(
                f"{_describe(request)} -> {response.status_code} {response.text[:200]}",
                server_error=True,
            )


def _operation_strategy(st: Any, operation: Any, mode: Any, pool: list[str], history: Any) -> Any:
    """The operation's cases: generated ones, ones on a real session, and (for appends of
    positive data) ones whose body is a generated history."""
    generated = operation.as_strategy(generation_mode=mode)
    if not pool or not any(p.name == "session_id" for p in operation.path_parameters):
        return generated
    real = st.one_of(
        [
            operation.as_strategy(generation_mode=mode, path_parameters={"session_id": sid})
            for sid in pool
        ]
    )
    branches = [real, generated]
    if operation.method == "post" and operation.path.endswith("/messages") and mode.is_positive:
        branches.append(st.tuples(real, history).map(_with_messages))
    return st.one_of(branches)


def _negatable(operation: Any) -> bool:
    """Whether the operation has anything to send invalid data in: a body, a query (or
    header, cookie) parameter, a path parameter with a constraint. A bare string in the
    path has no invalid value, and hypothesis would spend its whole budget finding so."""
    if operation.body:
        return True
    for parameter in operation.iter_parameters():
        if parameter.location.value != "path":
            return True
        schema = getattr(parameter, "optimized_schema", None) or {}
        if {k: v for k, v in schema.items() if k not in ("title", "description")} != {
            "type": "string"
        }:
            return True
    return False


def _with_messages(pair: tuple[Any, list[dict[str, Any]]]) -> Any:
    case, messages = pair
    case.body = {"messages": messages}
    return case


def _unsatisfiable(hypothesis: Any, exc: Exception) -> bool:
    """True when hypothesis could not generate a case (no negative data for an operation
    without parameters): nothing to send, not a finding."""
    return isinstance(exc, hypothesis.errors.Unsatisfiable) or type(exc).__name__ in {
        "Unsatisfiable",
        "SkipTest",
    }


@dataclass(frozen=True)
class _Request:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None


def _prepared(case: Any) -> _Request:
    """The case as the bytes schemathesis would send (``requests`` prepares them)."""
    import requests

    prepared = requests.Request(**case.as_transport_kwargs(base_url=BASE_URL)).prepare()
    headers = {
        name: value if isinstance(value, str) else value.decode("latin-1")
        for name, value in prepared.headers.items()
    }
    body = prepared.body
    if isinstance(body, str):
        body = body.encode()
    elif body is not None and not isinstance(body, bytes):
        raise TypeError("a streamed body")  # multipart files: none in this API
    return _Request(str(prepared.method), str(prepared.url), headers, body)


async def _call(client: httpx.AsyncClient, request: _Request) -> httpx.Response:
    return await client.request(
        request.method, request.url, headers=request.headers, content=request.body
    )


def _describe(request: _Request) -> str:
    body = (request.body or b"")[:160].decode("utf-8", "replace")
    return f"{request.method} {request.url.removeprefix(BASE_URL)} {body}".rstrip()


async def _check_records(
    client: httpx.AsyncClient, store: Store, ours: str | None, report: FuzzReport
) -> None:
    """No partial write: in the database, every session's counters match its message rows
    and its context is a valid history; over the API, every session of the client's tenant
    lists its messages and serves a context that is a valid history."""
    from sqlalchemy import func, select

    from recap_memory.store.models import MessageRecord, SessionRecord

    stored = (
        select(
            MessageRecord.session_id,
            func.count().label("messages"),
            func.sum(MessageRecord.chars).label("chars"),
        )
        .group_by(MessageRecord.session_id)
        .subquery()
    )
    query = select(
        SessionRecord.tenant,
        SessionRecord.uuid,
        SessionRecord.title,
        SessionRecord.message_count,
        SessionRecord.char_count,
        func.coalesce(stored.c.messages, 0),
        func.coalesce(stored.c.chars, 0),
    ).outerjoin(stored, stored.c.session_id == SessionRecord.id)
    async with store.transaction() as tx:
        rows = (await tx.execute(query)).all()
    tenant = next((row.tenant for row in rows if row.uuid == ours), None)
    for row in rows:
        tenant_, sid, title, count, chars, stored_count, stored_chars = row
        name = f"session {sid} ({(title or '')[:80]!r})"
        if (count, chars) != (stored_count, stored_chars):
            report.fail(
                f"{name}: counters say {count} messages / {chars} characters, "
                f"the record holds {stored_count} / {stored_chars}"
            )
        try:
            _, loaded = await store.load_context(tenant_, sid)
            valid = is_valid_history(loaded.view())
        except Exception as exc:
            report.fail(f"{name}: its context cannot be loaded: {exc!r}")
            continue
        if not valid:
            report.fail(f"{name}: its stored context is not a valid history")
        if tenant_ == tenant:
            await _check_over_api(client, sid, name, report)
    listed = await client.get("/sessions", params={"limit": 200})
    if listed.status_code != 200:
        report.fail(
            f"GET /sessions -> {listed.status_code} {listed.text[:120]} after the run",
            server_error=listed.status_code >= 500,
        )


async def _check_over_api(
    client: httpx.AsyncClient, sid: str, name: str, report: FuzzReport
) -> None:
    """The session, its messages and its context read back over the API."""
    session = await client.get(f"/sessions/{sid}")
    if session.status_code != 200:
        report.fail(
            f"{name}: GET /sessions/{sid} -> {session.status_code} {session.text[:120]}",
            server_error=session.status_code >= 500,
        )
    after: int | None = None
    while True:
        params = {"limit": 1000, **({"after": after} if after is not None else {})}
        page = await client.get(f"/sessions/{sid}/messages", params=params)
        if page.status_code != 200:
            report.fail(
                f"{name}: GET /sessions/{sid}/messages -> {page.status_code} {page.text[:120]}",
                server_error=page.status_code >= 500,
            )
            break
        after = page.json()["next_after"]
        if after is None:
            break
    context = await client.get(f"/sessions/{sid}/context")
    if context.status_code != 200:
        report.fail(
            f"{name}: GET /sessions/{sid}/context -> {context.status_code} {context.text[:120]}",
            server_error=context.status_code >= 500,
        )
        return
    try:
        valid = is_valid_history([from_openai(m) for m in context.json()["messages"]])
    except InputError as exc:
        report.fail(f"{name}: its context holds an unreadable message: {exc}")
        return
    if not valid:
        report.fail(f"{name}: GET /sessions/{sid}/context is not a valid history")


# the recap compact parser ----------------------------------------------------------------------


def fuzz_compact_parser(*, examples: int, seed: int | None = None) -> FuzzReport:
    """Run ``recap compact DOC -o OUT`` in-process on ``examples`` generated documents (and a
    few fixed nasty ones): random JSON, message lists and histories as a JSON array, as
    ``{"messages": [...]}`` and as JSONL, truncated JSON, broken UTF-8, deep nesting.

    Each run must exit 0 with a valid history in OUT, or exit 2 with one line on stderr
    and no OUT. Anything else (a traceback, another exit code, a partial file) is a crash.
    """
    hypothesis, st = _imports()
    from typer.testing import CliRunner

    from recap_memory.cli import app as cli

    settings = _settings(hypothesis, examples)
    report = FuzzReport()
    runner = CliRunner()
    logger = logging.getLogger("recap_memory")
    saved = (list(logger.handlers), logger.level, logger.propagate)

    def attempt(document: bytes) -> None:
        report.tried += 1
        with tempfile.TemporaryDirectory(prefix="recap-fuzz-") as tmp:
            source, target = Path(tmp) / "in.json", Path(tmp) / "out.json"
            source.write_bytes(document)
            result = runner.invoke(cli, ["compact", str(source), "-o", str(target)])
            problem = _compact_problem(result, target)
        if problem is not None:
            report.fail(f"{problem}; input {document[:160]!r}", server_error=True)

    try:
        _run(
            hypothesis, settings, seed, _documents(st), attempt,
            explicit=[
                b"[" * 100_000 + b"]" * 100_000,
                b'{"messages": [{"role": "us',
                b"\xff[]",
                b'[{"role": "user", "content": "\\ud800"}]',
            ],
        )  # fmt: skip
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
    return report


def _compact_problem(result: Any, target: Path) -> str | None:
    """What is wrong with one ``recap compact`` run, or None."""
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        if target.exists():
            return "exit 2 but the output file was written"
        if len(lines) != 1 or not lines[0].startswith("recap: error: "):
            return f"exit 2 without one error line on stderr: {result.stderr[:200]!r}"
        return None
    if result.exit_code != 0:
        exc = result.exception
        what = f"{type(exc).__name__}: {str(exc)[:200]}" if exc is not None else result.stderr
        return f"exit {result.exit_code} ({what})"
    try:
        out = json.loads(target.read_text(encoding="utf-8"))
        if not is_valid_history([from_openai(m) for m in out]):
            return "exit 0 but the output is not a valid history"
    except (OSError, ValueError, TypeError) as exc:
        return f"exit 0 but the output is unreadable: {exc!r}"
    return None


def _documents(st: Any) -> Any:
    """Bytes of conversation files, good and bad."""
    values, message, history = message_strategies(st)
    messages = st.lists(message, max_size=5)

    def dumps(value: Any, ascii: bool = False) -> str:
        return json.dumps(value, ensure_ascii=ascii)

    def jsonl(items: list[Any]) -> str:
        return "\n".join(dumps(i) for i in items)

    texts = st.one_of(
        values.map(dumps),
        message.map(dumps),
        messages.map(dumps),
        history.map(dumps),
        history.map(lambda ms: dumps({"messages": ms}, ascii=True)),  # lone surrogates escaped
        messages.map(lambda ms: dumps({"messages": ms, "model": "x"})),
        st.lists(st.one_of(message, values), max_size=5).map(jsonl),
        history.map(jsonl),
        st.sampled_from(["", " \n\t", "null", "{}", "[]", '{"messages": null}', "\ufeff[]"]),
    )
    truncated = st.tuples(texts, st.integers(min_value=0)).map(
        lambda pair: pair[0][: pair[1] % (len(pair[0]) + 1)]
    )
    # a lone surrogate in the text becomes the bytes a UTF-8 decoder refuses
    encoded = st.one_of(texts, truncated).map(lambda t: t.encode("utf-8", "surrogatepass"))
    broken = st.tuples(
        encoded,
        st.integers(min_value=0),
        st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80\x80"]),
    ).map(lambda t: t[0][: t[1] % (len(t[0]) + 1)] + t[2] + t[0][t[1] % (len(t[0]) + 1) :])
    nested = st.tuples(st.integers(min_value=1, max_value=5_000), st.booleans()).map(
        lambda t: (
            (b"[" * t[0] + b"]" * t[0])
            if t[1]
            else b'[{"role": "user", "content": "x", "extra": ' + b"[" * t[0] + b"]" * t[0] + b"}]"
        )
    )
    return st.one_of(encoded, broken, nested, st.binary(max_size=64))
