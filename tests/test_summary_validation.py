"""Summary validation a model cannot slip past: a corpus of refusals in every quote style
and position, reasoning blocks, special tokens of every chat-template family, leaked
dialogue turns, echoed prompts and error bodies — and of good summaries in several
languages and formats, quoting apologies and refusals people made — none misjudged."""

from __future__ import annotations

import pytest

from recap_memory import SummaryRejected
from recap_memory.summarizers.llm import CUMULATIVE, FRESH, STRUCTURED
from recap_memory.summarizers.validation import validate_summary
from tests.validation_corpus import bad_outputs, good_summaries

BAD, GOOD = bad_outputs(), good_summaries()


def validate(text: str, instructions: str | None = None) -> str:
    return validate_summary(text, source_chars=100_000, max_chars=50_000, instructions=instructions)


def test_the_corpus_is_large_and_varied():
    assert len(BAD) >= 200 and len(GOOD) >= 200
    assert {reason for _, reason in BAD} == {
        "refusal", "template_tokens", "role_turn", "prompt_echo", "error_text", "reasoning",
    }  # fmt: skip


def test_no_bad_output_is_accepted_and_each_is_refused_for_its_reason():
    misjudged = []
    for text, reason in BAD:
        try:
            validate(text)
            misjudged.append((text, "accepted"))
        except SummaryRejected as exc:
            if exc.reason != reason:
                misjudged.append((text, exc.reason))
    assert not misjudged, misjudged[:5]


def test_no_good_summary_is_rejected():
    rejected = []
    for text in GOOD:
        try:
            validate(text)
        except SummaryRejected as exc:
            rejected.append((text, str(exc)))
    assert not rejected, rejected[:5]


def test_a_closed_reasoning_block_is_stripped_and_the_summary_kept():
    text = "<think>\nFacts first: flight, date.\n</think>\n\nThe user booked UA 1203 on 3 May."
    assert validate(text) == "The user booked UA 1203 on 3 May."
    lone_close = "The user wants facts first.</think>The user booked UA 1203 on 3 May."
    assert validate(lone_close) == "The user booked UA 1203 on 3 May."


@pytest.mark.parametrize("template", [STRUCTURED, FRESH, CUMULATIVE])
def test_a_summary_repeating_its_own_prompt_is_refused(template: str):
    sentence = next(
        s for s in template.replace("\\\n", "").split(". ") if len(s.split()) >= 8 and "{" not in s
    )
    with pytest.raises(SummaryRejected) as caught:
        validate(f"The user booked UA 1203. {sentence}.", instructions=template)
    assert caught.value.reason == "prompt_echo"


@pytest.mark.data
@pytest.mark.slow
def test_every_summary_the_extractive_strategy_writes_of_real_conversations_is_accepted():
    """Real output, not only hand-written: folds of LoCoMo conversations at many cut
    points, through the compactor (which validates each); none may be rejected."""
    from recap_memory import Budget, Compactor, Policy, Trigger
    from recap_memory.eval.locomo import conversation_messages
    from tests.conftest import load_data

    written = 0
    for sample in load_data("locomo_dev.json")[:5]:
        messages = conversation_messages(sample)
        for end in range(60, len(messages), max(1, len(messages) // 45)):
            history = messages[:end]
            chars = sum(len(m.text) for m in history)
            policy = Policy(trigger=Trigger(chars=chars // 2), keep=Budget(chars=chars // 8))
            result = Compactor(policy=policy, fallback=None).compact_sync(history)
            assert result.report.path == "summarized", (end, result.report.reason)
            written += 1
    assert written >= 200
