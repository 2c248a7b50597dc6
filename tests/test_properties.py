"""Properties of every compaction, over generated conversations (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recap_memory import Budget, Compactor, Meter, Policy, Trigger, validate_history
from recap_memory.chain import parse_summary_message
from recap_memory.masking import is_shortened
from recap_memory.messages import Message
from recap_memory.summarizers import ExtractiveSummarizer, MaskSummarizer
from tests.strategies import conversations

policies = st.builds(
    lambda trigger, keep_share, cap: Policy(
        trigger=Trigger(chars=trigger),
        keep=Budget(chars=int(trigger * keep_share)),
        summary_max=Budget(chars=cap),
    ),
    st.integers(50, 3000),
    st.floats(0.0, 0.9),
    st.integers(40, 2000),
)
strategies = st.sampled_from([ExtractiveSummarizer(), MaskSummarizer()])
CHECKS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _present(message: Message, output: list[Message]) -> bool:
    return any(message == out for out in output)


@CHECKS
@given(conversations(), policies, strategies)
def test_every_output_is_a_valid_history_that_loses_nothing(history, policy, summarizer):
    result = Compactor(summarizer, policy).compact_sync(history)
    out, report = result.messages, result.report
    validate_history(out)
    if not report.compacted:
        assert out == history
        return
    first, last = report.covered or (-1, -1)  # no summary: outputs were only cut or masked
    for i, message in enumerate(history):
        if message.role == "system" or message.pinned:
            assert _present(message, out), f"system/pinned message {i} lost"
        elif not _present(message, out):
            masked = any(is_shortened(o) and o.tool_call_id == message.tool_call_id for o in out)
            assert first <= i <= last or masked, f"message {i} neither kept nor covered"


@CHECKS
@given(conversations(), policies)
def test_under_the_threshold_the_output_equals_the_input(history, policy):
    size = Meter().messages(history)
    if policy.trigger.fires(size):
        return
    result = Compactor(policy=policy).compact_sync(history)
    assert result.messages == history
    assert not result.report.compacted


@CHECKS
@given(conversations(), policies)
def test_the_summary_names_exactly_what_it_covers(history, policy):
    result = Compactor(policy=policy).compact_sync(history)
    if result.report.path != "summarized":
        return
    summaries = [m for m in result.messages if parse_summary_message(m)]
    assert len(summaries) == 1
    row = result.chain.latest
    assert row is not None
    assert (row.first, row.last) == result.report.covered
    pinned_inside = [
        i
        for i in range(row.first, row.last + 1)
        if history[i].pinned  # type: ignore[operator]
    ]
    assert set(pinned_inside) <= set(row.carried)
    assert len(row.render()) <= policy.summary_max.value + 200
