"""The extractive strategy alone: size cap, template, determinism."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from recap import Budget, Compactor, Policy, Trigger
from recap.summarizers import ExtractiveSummarizer, FoldRequest
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
    assert summary.count("checkout-api ERROR POST") <= 2
    assert "payments database pool saturated" in summary
