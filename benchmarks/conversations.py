"""Generated conversations for the benchmarks: the same input for the same seed.

A conversation is a system prompt, then turns of two kinds:

- a *chat* turn: a user question and a prose answer full of names, dates and amounts;
- an *agent* turn: an incident request, one or two rounds in which the assistant calls
  one or more tools at once (parallel calls, each answered by a JSON result: log lines,
  metric points, an order record), and the assistant's findings.

``python -m benchmarks engine`` feeds mixed conversations (:func:`conversation`: two chat turns
to one agent turn, one or two calls a round). ``python -m benchmarks peers`` cuts agent sessions
inside a parallel group (:func:`parallel_session`: agent turns only, two or three calls
a round): the first ``split`` results of one group about three quarters of the way in
lie before the *cut*, the rest after, so an engine told to keep exactly the messages
from the cut on must either move the cut to a turn boundary or leave tool results
without their call.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from recap_memory.counting import Meter
from recap_memory.messages import Message, ToolCall

SYSTEM = Message(role="system", content="You are a helpful assistant with access to tools.")
TOOLS = ("search_logs", "get_metrics", "get_order")
CUT_AT = 0.75
"""Where, as a share of a parallel session's messages, the parallel group at the cut sits."""

_SERVICES = ("billing-api", "auth-gateway", "search-indexer", "payments-worker", "inventory-sync")
_PEOPLE = ("Priya", "Marcus", "Elena", "Tomás", "Aiko", "Jonas", "Fatima", "Wei")
_CITIES = ("Lisbon", "Osaka", "Denver", "Nairobi", "Tallinn", "Bogotá", "Hobart")
_THINGS = ("apartment lease", "conference talk", "garden project", "budget", "piano lessons")
_CHAT_ASKS = (
    "What did {person} say about the {thing} when we spoke on {date}?",
    "I'm going to {city} on {date} with {person}; the budget is {n} euros. Any ideas?",
    "Can you help me plan the {thing}? {person} thinks it needs about {n} hours.",
    "Remind me why we moved the {thing} to {date}, and whether {person} agreed.",
)
_CHAT_ANSWERS = (
    "{person} said the {thing} should be done by {date}, and that {n} euros is enough.",
    "In {city} you could spend the first day near the old harbour and the second inland.",
    "We moved it because {person} was travelling to {city} that week.",
    "That leaves about {n} euros for the rest of the {thing}.",
    "I would book early: prices in {city} rise in the week of {date}.",
    "You mentioned that {person} prefers mornings, so I kept the slots before noon.",
)
_AGENT_ASKS = (
    "{service} is returning 5xx since {date}; find out why.",
    "Customers report slow checkouts on {service}. Check latency and recent deploys.",
    "Order ORD-{n} never reached {service}; trace it.",
)
_FINDINGS = (
    "The errors started right after deploy {deploy} of {service}.",
    "p99 latency of {service} is {n} ms, well above the 300 ms target.",
    "The connection pool of {service} is exhausted at peak; {n} requests waited.",
    "The database looks healthy, so it is not the cause.",
    "Rolling back {deploy} brought the error rate down to {pct}%.",
)


# turns ---------------------------------------------------------------------------------------


def _date(day: int) -> str:
    """The date of the ``day``-th turn (``2024-MM-DD``)."""
    return f"2024-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}"


def _fill(rng: random.Random, template: str, day: int) -> str:
    """``template`` with its fields drawn from ``rng`` (``day`` dates the turn)."""
    return template.format(
        person=rng.choice(_PEOPLE),
        city=rng.choice(_CITIES),
        thing=rng.choice(_THINGS),
        service=rng.choice(_SERVICES),
        date=_date(day),
        n=rng.randrange(10, 99_999),
        deploy=f"v{rng.randrange(1, 9)}.{rng.randrange(0, 40)}.{rng.randrange(0, 9)}",
        pct=round(rng.uniform(0.1, 9.9), 1),
    )


def _chat_turn(rng: random.Random, n: int) -> list[Message]:
    """A user question and a prose answer (``n`` numbers and dates the turn)."""
    answers = rng.sample(_CHAT_ANSWERS, rng.randint(1, 4))
    answer = " ".join(_fill(rng, template, n) for template in answers)
    return [
        Message(role="user", content=_fill(rng, rng.choice(_CHAT_ASKS), n)),
        Message(role="assistant", content=answer),
    ]


def _tool_output(rng: random.Random, name: str, service: str, n: int) -> str:
    """A tool's JSON answer: log lines, metric points or an order record."""
    stamp = f"{_date(n)}T{rng.randrange(24):02d}"
    if name == "search_logs":
        hits = [
            {
                "ts": f"{stamp}:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z",
                "level": rng.choice(("ERROR", "WARN", "INFO")),
                "msg": rng.choice(("timeout calling db-primary", "pool exhausted", "retrying")),
                "trace_id": f"{rng.getrandbits(48):012x}",
            }
            for _ in range(rng.randint(1, 8))
        ]
        return json.dumps({"service": service, "matches": hits})
    if name == "get_metrics":
        points = [[f"{stamp}:{m:02d}", rng.randrange(40, 2_000)] for m in range(0, 60, 10)]
        return json.dumps({"service": service, "metric": "p99_latency_ms", "points": points})
    items = [{"sku": f"SKU-{rng.randrange(10**5)}", "qty": rng.randint(1, 5)} for _ in range(2)]
    return json.dumps({"order_id": f"ORD-{n}", "status": "stuck", "items": items})


def _agent_turn(rng: random.Random, n: int, calls: tuple[int, int] = (1, 2)) -> list[Message]:
    """A request, one or two rounds of tool calls (``calls`` bounds how many a round makes
    at once), and a finding. Call ids are unique per ``n``."""
    service = rng.choice(_SERVICES)
    turn = [Message(role="user", content=_fill(rng, rng.choice(_AGENT_ASKS), n))]
    for r in range(rng.randint(1, 2)):
        names = rng.sample(TOOLS, rng.randint(*calls))
        round_calls = tuple(
            ToolCall(id=f"call_{n}_{r}_{k}", name=name, arguments=json.dumps({"service": service}))
            for k, name in enumerate(names)
        )
        turn.append(
            Message(role="assistant", content=f"Checking {service}.", tool_calls=round_calls)
        )
        turn.extend(
            Message(role="tool", tool_call_id=c.id, name=c.name,
                    content=_tool_output(rng, c.name, service, n))
            for c in round_calls
        )  # fmt: skip
    findings = (_fill(rng, t, n) for t in rng.sample(_FINDINGS, rng.randint(1, 3)))
    turn.append(Message(role="assistant", content=" ".join(findings)))
    return turn


def generated_turns(
    rng: random.Random, *, agent_share: float = 1 / 3, calls: tuple[int, int] = (1, 2)
) -> Iterator[list[Message]]:
    """Endless turns drawn from ``rng``: agent turns with probability ``agent_share``
    (each round calls between ``calls[0]`` and ``calls[1]`` tools at once, at most
    ``len(TOOLS)``), chat turns otherwise. The turn's index dates it and names its calls."""
    for n in itertools.count():
        yield _agent_turn(rng, n, calls) if rng.random() < agent_share else _chat_turn(rng, n)


# conversations -------------------------------------------------------------------------------


def conversation(
    *, chars: int | None = None, turns: int | None = None, seed: int = 7
) -> list[Message]:
    """:data:`SYSTEM` and mixed generated turns: ``turns`` of them, or as many as fit in
    ``chars`` characters (a turn that does not fit is skipped while more than a tenth of
    the room is left; at least 2 turns). Messages are numbered by their ``id``."""
    meter = Meter()
    messages, size, taken, skipped = [SYSTEM], meter.message(SYSTEM).chars, 0, 0
    for turn in generated_turns(random.Random(seed)):
        if turns is not None and taken >= turns:
            break
        if turns is None:
            room, cost = (chars or 0) - size, meter.messages(turn).chars
            if taken >= 2 and (room < (chars or 0) / 10 or skipped >= 100):
                break
            if cost > room and skipped < 100:
                skipped += 1
                continue
            size += cost
        messages.extend(turn)
        taken += 1
    return [m.replace(id=i) for i, m in enumerate(messages)]


def split_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """The messages cut before every user message (what precedes the first rides with it)."""
    turns: list[list[Message]] = [[]]
    for m in messages:
        if m.role == "user" and any(x.role == "user" for x in turns[-1]):
            turns.append([])
        turns[-1].append(m)
    return turns


@dataclass(frozen=True)
class ParallelCase:
    """A generated agent session and the index of the first message after the cut."""

    messages: list[Message]
    cut: int
    """``messages[cut]`` is a tool result whose call and sibling results lie before it."""


def parallel_session(seed: int, turns: int = 10) -> ParallelCase:
    """:data:`SYSTEM` and ``turns`` agent turns whose every round calls 2 or 3 tools at once,
    cut inside the round nearest :data:`CUT_AT` (see the module docstring). Messages are
    numbered ``m0``, ``m1``, … by their ``id``."""
    rng = random.Random(seed)
    session = itertools.islice(generated_turns(rng, agent_share=1.0, calls=(2, 3)), turns)
    messages = [SYSTEM, *itertools.chain.from_iterable(session)]
    messages = [m.replace(id=f"m{i}") for i, m in enumerate(messages)]
    groups = [(i, len(m.tool_calls)) for i, m in enumerate(messages) if len(m.tool_calls) > 1]
    start, width = min(groups, key=lambda g: abs(g[0] - CUT_AT * len(messages)))
    split = rng.randint(1, width - 1)
    return ParallelCase(messages, start + 1 + split)


def parallel_sessions(count: int, seed: int = 0) -> list[ParallelCase]:
    """``count`` sessions with seeds ``seed``, ``seed + 1``, …"""
    return [parallel_session(seed + n) for n in range(count)]
