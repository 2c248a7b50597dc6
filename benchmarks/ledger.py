"""What the reliability run's clients sent and were told, and the checks that compare the
stored state against it.

Every message a client sends carries a unique marker in its text (``[m:TAG:N]``, TAG
naming its session) and a client id; every request carries an ``Idempotency-Key``, and
every answer it got is written down (:class:`Attempt`). The verifier functions here are
pure: they take the ledger and what the API returned afterwards (the raw record, the
context, the summary chain) and answer a :class:`Check` — so a unit test can feed them a
crafted bad record and see each check fail.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from recap_memory.errors import InputError, SummaryRejected
from recap_memory.messages import INSTRUCTION_ROLES, from_openai, validate_history
from recap_memory.summarizers.validation import check_readable

MARKER = re.compile(r"\[m:([0-9a-z]+):(\d+)\]")
SUMMARY_PREFIX = "[recap summary of messages"

Kind = Literal["acknowledged", "refused", "unknown", "connect", "timeout", "unexpected"]
"""What one attempt got: a 201; 503 ``database_unavailable`` (nothing written); 503
``outcome_unknown`` or a connection lost after sending (may have been written); no
connection (nothing sent); a timeout (may have been written); anything else."""
Outcome = Literal["acknowledged", "refused", "unresolved"]


def marker(tag: str, number: int) -> str:
    """The marker of message ``number`` of the session tagged ``tag``."""
    return f"[m:{tag}:{number}]"


def marker_of(message: Mapping[str, Any]) -> str | None:
    """The marker in a message's text (None when it has none)."""
    content = message.get("content")
    match = MARKER.search(content) if isinstance(content, str) else None
    return match.group(0) if match else None


@dataclass(frozen=True)
class Sent:
    """One message a client sent: its marker and its client id."""

    marker: str
    client_id: str
    role: str


@dataclass
class Attempt:
    """One try of a request and what came of it."""

    kind: Kind
    status: int | None = None
    code: str | None = None
    ids: list[int] | None = None
    held: int = 0
    replayed: bool = False
    fresh_key: bool = False
    """Sent under a new Idempotency-Key (a client that lost its key: only the message
    ids keep the retry from appending twice)."""


@dataclass
class Request:
    """One append, however many times it was tried."""

    session: str
    messages: list[Sent]
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def answer(self) -> Attempt | None:
        """The attempt that was acknowledged (201), if any."""
        return next((a for a in self.attempts if a.kind == "acknowledged"), None)

    @property
    def outcome(self) -> Outcome:
        """Acknowledged (a 201); refused (every attempt surely wrote nothing: 503
        ``database_unavailable``, no connection, a 4xx); else unresolved."""
        if self.answer is not None:
            return "acknowledged"
        definite = all(
            a.kind in ("refused", "connect")
            or (a.kind == "unexpected" and a.status is not None and 400 <= a.status < 500)
            for a in self.attempts
        )
        return "refused" if definite else "unresolved"


@dataclass
class Ledger:
    """Every request of every client, in the order each client sent them."""

    requests: list[Request] = field(default_factory=list)

    def of(self, outcome: Outcome) -> list[Request]:
        """The requests that came to ``outcome``."""
        return [r for r in self.requests if r.outcome == outcome]

    def attempts(self) -> Counter[str]:
        """How many attempts got each kind of answer."""
        return Counter(a.kind for r in self.requests for a in r.attempts)

    def unexpected(self) -> list[str]:
        """The answers no client should get (a 500, a 409, a 422 …), described."""
        return [
            f"{r.session[:8]}: HTTP {a.status} {a.code or ''}".strip()
            for r in self.requests
            for a in r.attempts
            if a.kind == "unexpected"
        ]


@dataclass
class Check:
    """One property checked after the run, with what it compared."""

    name: str
    passed: bool
    detail: str = ""


Record = Mapping[str, Sequence[Mapping[str, Any]]]
"""Each session's raw record (``GET /sessions/{id}/messages``), in record order."""


def _places(records: Record) -> dict[str, list[tuple[str, int]]]:
    """Each marker's places in the records: (session, record id)."""
    found: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for session, record in records.items():
        for message in record:
            mark = marker_of(message)
            if mark is not None:
                found[mark].append((session, int(message["id"])))
    return found


def check_acknowledged(ledger: Ledger, records: Record) -> Check:
    """Every acknowledged message is in its session's record exactly once, under the
    record id and client id its 201 answered."""
    places = _places(records)
    acknowledged = once = missing = duplicated = elsewhere = wrong_ids = 0
    client_ids = {int(m["id"]): m.get("client_id") for record in records.values() for m in record}
    for request in ledger.of("acknowledged"):
        answer = request.answer
        assert answer is not None and answer.ids is not None
        if len(answer.ids) != len(request.messages):
            wrong_ids += len(request.messages)
            continue
        for sent, answered_id in zip(request.messages, answer.ids, strict=True):
            acknowledged += 1
            here = [i for s, i in places.get(sent.marker, []) if s == request.session]
            elsewhere += len(places.get(sent.marker, [])) - len(here)
            if not here:
                missing += 1
            elif len(here) > 1:
                duplicated += 1
            else:
                once += 1
                if here[0] != answered_id or client_ids.get(here[0]) != sent.client_id:
                    wrong_ids += 1
    passed = acknowledged == once and not (missing or duplicated or elsewhere or wrong_ids)
    return Check(
        "acknowledged messages in the record exactly once, under the ids their 201 gave",
        passed,
        f"{acknowledged:,} acknowledged, {once:,} found once, {missing} missing, "
        f"{duplicated} duplicated, {elsewhere} in another session, {wrong_ids} under other ids",
    )


def check_refused_absent(ledger: Ledger, records: Record) -> Check:
    """No message of a request that was refused (503 ``database_unavailable``: nothing
    written) and never acknowledged is in any record."""
    places = _places(records)
    refused = [s for r in ledger.of("refused") for s in r.messages]
    found = sum(1 for s in refused if places.get(s.marker))
    requests = len(ledger.of("refused"))
    return Check(
        "refused (nothing written) absent",
        found == 0,
        f"{requests} requests ({len(refused)} messages) refused, {found} found",
    )


def check_no_strangers(ledger: Ledger, records: Record) -> Check:
    """No marker is in the records twice, and every message there is one a client sent."""
    sent = {s.marker for r in ledger.requests for s in r.messages}
    counts: Counter[str] = Counter()
    strangers = 0
    total = 0
    for record in records.values():
        for message in record:
            total += 1
            mark = marker_of(message)
            if mark is None or mark not in sent:
                strangers += 1
            else:
                counts[mark] += 1
    twice = sum(1 for c in counts.values() if c > 1)
    return Check(
        "no message twice, none that no client sent",
        twice == 0 and strangers == 0,
        f"{total:,} in the records, {twice} twice, {strangers} not sent by a client",
    )


def check_order(ledger: Ledger, records: Record) -> Check:
    """Each session's record, read as markers, is the sequence its client had
    acknowledged, in the order it sent them (messages of unresolved requests, which may
    or may not have been written, set aside)."""
    unresolved = {s.marker for r in ledger.of("unresolved") for s in r.messages}
    expected: dict[str, list[str]] = defaultdict(list)
    for request in ledger.of("acknowledged"):
        expected[request.session] += [s.marker for s in request.messages]
    differing: list[str] = []
    for session in sorted(set(expected) | set(records)):
        stored = [marker_of(m) for m in records.get(session, [])]
        seen = [m for m in stored if m not in unresolved]
        if seen != expected.get(session, []):
            differing.append(session)
    sessions = len(set(expected) | set(records))
    detail = f"{sessions} sessions, " + (
        "sequences equal"
        if not differing
        else f"{len(differing)} differ (first: {differing[0][:8]})"
    )
    if unresolved:
        detail += f"; {len(unresolved)} messages of unresolved requests set aside"
    return Check("order: each record is what its client sent, in order", not differing, detail)


def expected_context(
    record: Sequence[Mapping[str, Any]], through: int | None, carried: Iterable[int]
) -> list[Mapping[str, Any] | None]:
    """What the context must be, from the record: the system messages summarized past,
    the summary (None), then every message after ``through`` with the system and carried
    messages at or below it, in record order."""
    if through is None:
        return list(record)
    kept = set(carried)
    front = [m for m in record if m["role"] in INSTRUCTION_ROLES and int(m["id"]) <= through]
    rest = [
        m
        for m in record
        if int(m["id"]) > through or (m["role"] not in INSTRUCTION_ROLES and int(m["id"]) in kept)
    ]
    return [*front, None, *rest]


_RECAP_KEYS = ("id", "pinned", "client_id", "created_at")
"""What the listing adds to a message and a context never carries."""


def _plain(message: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k not in _RECAP_KEYS}


def context_problems(
    record: Sequence[Mapping[str, Any]],
    context: Mapping[str, Any],
    summaries: Sequence[Mapping[str, Any]],
) -> list[str]:
    """How a session's context differs from what its record and chain say it must be
    (empty when it is complete and valid)."""
    active = [r for r in summaries if r.get("superseded_by") is None]
    through = context.get("summarized_through")
    carried = {int(c) for r in active for c in r.get("carried", [])}
    problems: list[str] = []
    if through is not None and not active:
        problems.append(f"summarized through {through} with no summary row")
    if through is None and active:
        problems.append("summary rows but no summarized-through")
    if active and through is not None and max(int(r["last_message_id"]) for r in active) != through:
        problems.append("the chain does not end at summarized-through")
    for m in record:
        folded = through is not None and int(m["id"]) <= through and int(m["id"]) not in carried
        if m.get("pinned") and folded:
            problems.append(f"pinned message {m['id']} folded into the summary")
    want = expected_context(record, through, carried)
    got_ids = list(context.get("ids", []))
    want_ids = [None if m is None else int(m["id"]) for m in want]
    if got_ids != want_ids:
        problems.append(f"ids {_short(got_ids)} where the record says {_short(want_ids)}")
    messages = list(context.get("messages", []))
    for n, (got, wanted) in enumerate(zip(messages, want, strict=False)):
        if wanted is None:
            text = got.get("content")
            if got.get("role") != "user" or not (
                isinstance(text, str) and text.startswith(SUMMARY_PREFIX)
            ):
                problems.append(f"message {n} should be the summary")
            elif any(str(r["content"]).strip() not in text for r in active):
                problems.append(f"the summary message {n} lacks a row's text")
        elif _plain(got) != _plain(wanted):
            problems.append(f"message {n} differs from record message {wanted['id']}")
    if len(messages) != len(want):
        problems.append(f"{len(messages)} messages where the record says {len(want)}")
    try:
        validate_history([from_openai(m) for m in messages], source="context")
    except InputError as exc:
        problems.append(f"not a valid history: {exc}")
    return problems


def _short(ids: Sequence[int | None]) -> str:
    return str(list(ids)) if len(ids) <= 8 else f"[{ids[0]}, {ids[1]}, … {ids[-1]}] ({len(ids)})"


def check_contexts(
    records: Record,
    contexts: Mapping[str, Mapping[str, Any]],
    summaries: Mapping[str, Sequence[Mapping[str, Any]]],
) -> Check:
    """Every context is complete (system, summary, carried and the tail after
    summarized-through, message by message as in the record) and a valid history."""
    bad: dict[str, list[str]] = {}
    compacted = 0
    for session, record in records.items():
        context = contexts.get(session)
        if context is None:
            bad[session] = ["no context"]
            continue
        compacted += context.get("summarized_through") is not None
        problems = context_problems(record, context, summaries.get(session, []))
        if problems:
            bad[session] = problems
    detail = (
        f"{len(records)} sessions ({compacted} compacted), "
        "tail = record after summarized-through, system and carried messages kept, valid"
    )
    if bad:
        first = next(iter(bad))
        detail = f"{len(bad)} of {len(records)} incomplete or invalid; {first[:8]}: {bad[first][0]}"
    return Check("context complete", not bad, detail)


def check_summary_texts(
    summaries: Mapping[str, Sequence[Mapping[str, Any]]],
    good: Iterable[str],
    injected: Iterable[str],
) -> Check:
    """No summary row (superseded ones too) holds text the validator refuses or any of the
    ``injected`` bad strings; each holds a text the model served as a good answer."""
    good_texts = {g.strip() for g in good}
    bad_strings = list(injected)
    rows = rejected = carrying = foreign = 0
    for chain in summaries.values():
        for row in chain:
            rows += 1
            text = str(row["content"])
            try:
                check_readable(text)
            except SummaryRejected:
                rejected += 1
            if any(s in text for s in bad_strings):
                carrying += 1
            if text.strip() not in good_texts:
                foreign += 1
    return Check(
        "no bad summary stored",
        not (rejected or carrying or foreign),
        f"{rows} summary rows, {rejected} refused by the validator, {carrying} holding an "
        f"injected bad text, {foreign} not a text the model answered",
    )


def check_chains(records: Record, summaries: Mapping[str, Sequence[Mapping[str, Any]]]) -> Check:
    """Active summary ranges never overlap, and every message at or below the chain's end
    is in a range (or carried)."""
    overlapping = gaps = 0
    for session, record in records.items():
        active = sorted(
            (int(r["first_message_id"]), int(r["last_message_id"]))
            for r in summaries.get(session, [])
            if r.get("superseded_by") is None
        )
        if any(a[1] >= b[0] for a, b in itertools.pairwise(active)):
            overlapping += 1
        if not active:
            continue
        end = active[-1][1]
        for m in record:
            i = int(m["id"])
            inside = any(first <= i <= last for first, last in active)
            if i <= end and m["role"] not in INSTRUCTION_ROLES and not inside:
                gaps += 1
                break
    return Check(
        "summary ranges: no overlap, no gap",
        not (overlapping or gaps),
        f"{len(records)} sessions, {overlapping} overlapping, {gaps} with a gap",
    )
