"""The extractive strategy alone: size cap, template, determinism."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from recap_memory import Budget, Compactor, Policy, Trigger
from recap_memory.summarizers import ExtractiveSummarizer, FoldRequest
from tests.conftest import assistant, system, tool, user
from tests.strategies import conversations


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(20, 3000))
def test_summary_never_exceeds_its_cap(history, cap):
    request = FoldRequest([m for m in history if m.role != "system"], cap)
    summary = asyncio.run(ExtractiveSummarizer().fold(request)).summary or ""
    assert len(summary) <= cap


def test_agent_spans_fill_the_design_a_template_and_runs_repeat_exactly():
    from tests.test_compactor import agent_history

    request = FoldRequest(agent_history(3)[1:], 1500)
    first = ExtractiveSummarizer().summarize(request)
    assert first == ExtractiveSummarizer().summarize(request)
    for heading in ("**Investigating:**", "**Key findings:**", "**Current state:**"):
        assert heading in first


def test_near_identical_log_lines_are_not_all_copied():
    """A dump of lines that differ only in numbers must not make the summary look like
    runaway repetition (the validator would reject it, and the fallback with it)."""
    logs = "\n".join(
        f"2026-11-28T14:{m:02d}:00Z checkout-api ERROR POST /api/v2/pay 500 "
        f"upstream=payments-db pool_wait_ms={900 + m}"
        for m in range(40)
    )
    history = [
        system("You investigate incidents."),
        user("Checkout is failing since 14:10. Find out why."),
        assistant(None, calls=[("c1", "fetch_logs")]),
        tool("c1", logs),
        assistant("The payments database pool is saturated: every failure waits 900+ ms."),
        user("What changed at 14:10?"),
        assistant("Deploy v2.31.0 at 14:08 cut the pool size from 50 to 5."),
    ]
    policy = Policy(trigger=Trigger(chars=3_000), keep=Budget(chars=400))
    result = Compactor(policy=policy, fallback=None).compact_sync(history)
    assert result.report.path == "summarized", result.report.reason
    summary = result.messages[1].text
    assert summary.count("checkout-api ERROR POST") <= 1
    assert "40× " in summary, "the repeated lines are one line with their count"
    assert "The payments database pool is saturated" in summary


def test_identifiers_the_agent_acted_on_outlast_tool_noise():
    """Ids the user gave or passed to a tool are what an agent needs later."""
    import json

    from recap_memory.messages import Message, ToolCall

    flights = [
        {"flight_number": f"HAT{n:03d}", "status": "available", "seats": n % 9, "price": 100 + n}
        for n in range(40)
    ]
    span = [
        user("Hello there, I need to change a booking please."),
        assistant("Sure, I can help with changing the booking. What is your user id?"),
        user("It is mia_li_3668 and the reservation is ZFA04Y, moving to an earlier flight."),
        Message(
            role="assistant",
            tool_calls=(
                ToolCall(id="c1", name="search_direct_flight", arguments='{"date": "2024-05-20"}'),
            ),
        ),
        tool("c1", json.dumps(flights), name="search_direct_flight"),
        assistant("Flight HAT017 leaves earliest. Shall I book it?"),
    ]
    summary = ExtractiveSummarizer().summarize(FoldRequest(span, 260))
    for identifier in ("ZFA04Y", "mia_li_3668", "2024-05-20"):
        assert identifier in summary, summary


def test_what_the_kept_turns_say_is_not_repeated():
    span = [
        user("Caroline: I adopted a dog named Oscar last week."),
        assistant("Melanie: We went camping at the lake in July."),
    ]
    kept = [user("Caroline: Oscar the dog loves the park.")]
    alone = ExtractiveSummarizer().summarize(FoldRequest(span, 60))
    beside = ExtractiveSummarizer().summarize(FoldRequest(span, 60, kept=kept))
    assert "Oscar" in alone and "camping" not in alone
    assert "camping" in beside


def test_a_transcripts_own_speaker_names_lead_the_lines():
    span = [
        user("[Session of 8 May, 2023]\nCaroline: I went to the support group yesterday."),
        assistant("Melanie: That's great, I painted a sunrise."),
    ]
    summary = ExtractiveSummarizer().summarize(FoldRequest(span, 400))
    assert summary.splitlines() == [
        "[8 May 2023]",
        "- Caroline: I went to the support group yesterday (7 May 2023).",
        "- Melanie: That's great, I painted a sunrise.",
    ]


def test_an_update_keeps_what_the_previous_summary_was_investigating():
    previous = (
        "**Investigating:** checkout fails since 14:10\n**Key findings:**\n- pool size cut to 5"
    )
    span = [user("Is it fixed?"), assistant("Yes: the pool is back at 50.")]
    summary = ExtractiveSummarizer().summarize(FoldRequest(span, 400, previous=previous))
    assert "checkout fails since 14:10" in summary
    assert "pool size cut to 5" in summary


def test_header_lines_take_at_most_half_of_the_summary():
    span = [
        user(f"[Session of day {n}]\nCaroline: I planted {n} tomato seedlings in bed {n}.")
        for n in range(40)
    ]
    summary = ExtractiveSummarizer().summarize(FoldRequest(span, 400))
    headers = [line for line in summary.splitlines() if line.startswith("Session")]
    assert sum(len(line) + 1 for line in headers) <= 200
    assert any("tomato" in line for line in summary.splitlines())
