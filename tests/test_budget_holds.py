"""The budget is a promise: a huge tool output never leaves a history over its trigger, the
hard cap is never exceeded, and a pass that would grow the context is not a compaction."""

from __future__ import annotations

import pytest

from recap_memory import (
    BackendError,
    Budget,
    Compactor,
    ContextTooLargeError,
    Meter,
    Policy,
    Trigger,
    validate_history,
)
from recap_memory.errors import SummaryRejected
from recap_memory.llm import FakeModel
from recap_memory.summarizers import Fold, FoldRequest, LLMSummarizer, Summarizer
from tests.conftest import assistant, system, tool, user

LOGS = "\n".join(
    f'level=error svc=orders-db msg="slow query {900 + n * 7} ms" trace=t{n:05x}'
    for n in range(900)
)


def huge_newest_turn() -> list:
    """A tiny span before a newest turn whose tool outputs alone pass the trigger."""
    return [
        system("You investigate incidents."),
        user("q1"),
        assistant("a1"),
        user("Why is checkout slow? Look at the orders database."),
        assistant(None, calls=[("c1", "fetch_logs"), ("c2", "fetch_logs")]),
        tool("c1", LOGS, name="fetch_logs"),
        tool("c2", LOGS[: len(LOGS) // 2], name="fetch_logs"),
    ]


def chars(messages) -> int:
    return Meter().messages(messages).chars


def test_a_huge_tool_output_in_the_newest_turn_is_cut_under_the_trigger():
    history = huge_newest_turn()
    assert chars(history) > 60_000
    result = Compactor(policy=Policy(trigger=Trigger(chars=60_000))).compact_sync(history)
    validate_history(result.messages)
    assert chars(result.messages) <= 60_000
    assert result.report.compacted and result.report.masked >= 1
    cut = next(m for m in result.messages if m.role == "tool" and "cut to its head" in m.text)
    assert "(call c1)" in cut.text and f"{len(LOGS):,} chars" in cut.text
    assert cut.text.splitlines()[1] == LOGS.splitlines()[0], "the head is kept as written"


class Failing(Summarizer):
    """A fallback that fails too."""

    name = "failing"

    async def fold(self, request: FoldRequest) -> Fold:
        raise SummaryRejected("empty", "nothing to say")


def test_when_every_strategy_fails_the_oversized_outputs_are_still_cut():
    model = FakeModel([BackendError("down", kind="connection")] * 5)
    policy = Policy(trigger=Trigger(chars=60_000))
    compactor = Compactor(LLMSummarizer(model), policy, fallback=Failing())
    result = compactor.compact_sync(huge_newest_turn())
    assert result.report.path == "masked" and result.report.compacted
    assert "down" in (result.report.reason or "") and "cut to fit" in (result.report.reason or "")
    assert chars(result.messages) <= 60_000
    validate_history(result.messages)


def test_the_hard_cap_is_never_exceeded_and_an_impossible_one_says_why():
    history = huge_newest_turn()
    policy = Policy(
        trigger=Trigger(chars=200_000), keep=Budget(chars=1_000), max=Budget(chars=8_000)
    )
    result = Compactor(policy=policy).compact_sync(history)  # not due: the cap holds anyway
    assert chars(result.messages) <= 8_000
    validate_history(result.messages)
    tokens = policy.model_copy(update={"max": Budget(tokens=1_500)})
    assert Meter().messages(Compactor(policy=tokens).compact_sync(history).messages).tokens <= 1_500
    history.append(assistant("Found it."))
    history.append(user("Here is the whole dump again: " + "x" * 9_000))
    with pytest.raises(ContextTooLargeError, match="newest user message alone"):
        Compactor(policy=policy).compact_sync(history)


def test_asked_to_leave_history_unchanged_on_failure_it_does():
    model = FakeModel([BackendError("down", kind="connection")] * 5)
    compactor = Compactor(
        LLMSummarizer(model), Policy(trigger=Trigger(chars=60_000)), fallback=None
    )
    history = huge_newest_turn()
    result = compactor.compact_sync(history)
    assert result.report.path == "rejected" and result.messages == history


def test_a_pass_that_would_grow_the_context_is_not_reported_as_a_compaction():
    history = [user("hi"), assistant("hello"), user("ok"), assistant("sure"), user("go")]
    policy = Policy(trigger=Trigger(chars=10), keep=Budget(chars=2))
    result = Compactor(policy=policy).compact_sync(history)
    assert not result.report.compacted
    assert result.messages == history


def incident_session(turns: int, seed: int = 7) -> list:
    """An incident session: requests, parallel tool calls returning repetitive log lines and
    metrics, findings; the kind of history the extractive summary must never fail on."""
    import random

    rng = random.Random(seed)
    history = [system("You investigate incidents. Quote the exact log lines you rely on.")]
    for n in range(turns):
        logs = "\n".join(
            f"2026-11-28T14:{m % 60:02d}:{rng.randrange(60):02d}Z level=error svc=orders-db "
            f'msg="slow query {rng.randrange(900, 4000)} ms" trace={rng.getrandbits(48):012x}'
            for m in range(rng.randrange(20, 80))
        )
        metrics = "\n".join(
            f"orders-db p99_ms={rng.randrange(400, 900)} pool_in_use={rng.randrange(40, 50)}/50"
            for _ in range(30)
        )
        history += [
            user(f"Turn {n}: checkout is slow again, what is failing?"),
            assistant(None, calls=[(f"l{n}", "fetch_logs"), (f"m{n}", "fetch_metrics")]),
            tool(f"l{n}", logs, name="fetch_logs"),
            tool(f"m{n}", metrics, name="fetch_metrics"),
            assistant(f"Finding {n}: orders-db pool saturated, slow queries up to 4000 ms."),
        ]
    return history


def test_rolling_incident_sessions_never_see_a_rejected_summary_or_an_overrun():
    session = incident_session(40)
    policy = Policy(trigger=Trigger(chars=30_000), keep=Budget(chars=8_000))
    compactor = Compactor(policy=policy, fallback=None)
    history: list = []
    passes = 0
    for message in session:
        history.append(message)
        result = compactor.compact_sync(history)
        assert result.report.path != "rejected", result.report.reason
        history = result.messages
        passes += result.report.compacted
        assert chars(history) <= 30_000
    assert passes >= 5
    summary = history[1].text
    assert "× " in summary, "repeated log lines are collapsed with their count"
