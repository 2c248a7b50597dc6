"""The extractive strategy alone: size cap, template, determinism."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from recap.summarizers import ExtractiveSummarizer, FoldRequest
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
