"""The engine's seed behaviours: skips, the boundary rule, the chain, pins, failures."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from recap_memory import (
    BackendError,
    Budget,
    Compactor,
    Message,
    Meter,
    Policy,
    Trigger,
    validate_history,
)
from recap_memory.chain import Chain, parse_summary_message
from recap_memory.llm import Completion, FakeModel
from recap_memory.masking import is_masked
from recap_memory.summarizers import LLMSummarizer
from tests.conftest import assistant, system, tool, user

SMALL = Policy(trigger=Trigger(chars=300), keep=Budget(chars=120), summary_max=Budget(chars=400))


def prose(n: int, topic: str = "node") -> str:
    """Varied text of about ``n`` words (real text does not repeat one phrase)."""
    return " ".join(f"{topic}{i} reported latency {i * 37 % 1000}ms" for i in range(n // 4 + 1))


def agent_history(turns: int = 4):
    history = [system("You investigate incidents.")]
    for n in range(turns):
        history += [
            user(f"turn {n}: why did payments time out? {prose(12, f'q{n}x')}"),
            assistant("checking", calls=[(f"a{n}", "logs"), (f"b{n}", "metrics")]),
            tool(f"a{n}", f"log dump {n}: {prose(30, f'pod{n}x')}"),
            tool(f"b{n}", f"metrics {n}: {prose(30, f'series{n}x')}"),
            assistant(f"finding {n}: deploy v4.18.{n} {prose(12, f'f{n}x')}"),
        ]
    return history


def test_fewer_than_two_user_turns_is_skipped():
    history = [system(), user(prose(100)), assistant(prose(100))]
    result = Compactor(policy=SMALL).compact_sync(history)
    assert not result.report.compacted
    assert "user turn" in (result.report.reason or "")
    assert result.messages == history


def test_disabled_returns_at_once_without_calling_the_model():
    model = FakeModel()
    policy = SMALL.model_copy(update={"enabled": False})
    result = Compactor(LLMSummarizer(model), policy).compact_sync(agent_history())
    assert result.report.reason == "disabled"
    assert model.calls == []


def test_cut_lands_on_a_user_message_and_keeps_parallel_results_together():
    history = agent_history()
    result = Compactor(policy=SMALL).compact_sync(history)
    assert result.report.compacted
    out = result.messages
    validate_history(out)
    assert out[0] == history[0]
    assert parse_summary_message(out[1]) is not None
    assert out[2].role == "user" and out[2] in history  # the kept tail opens a user turn
    kept_calls = [m for m in out if m.tool_calls]
    for call_message in kept_calls:
        results = [
            m
            for m in out
            if m.role == "tool" and m.tool_call_id in {c.id for c in call_message.tool_calls}
        ]
        assert len(results) == len(call_message.tool_calls)


def test_structured_summary_and_design_a_log_lines(caplog):
    caplog.set_level(logging.INFO, logger="recap_memory.compactor")
    result = Compactor(policy=SMALL).compact_sync(agent_history(), request_id="abc12345")
    summary = result.messages[1].text
    assert "**Key findings:**" in summary and "**Investigating:**" in summary
    lines = [r.getMessage() for r in caplog.records]
    assert any(
        line.startswith("[abc12345] summarizer: session=") and "removing" in line for line in lines
    )
    assert any(line.startswith("[abc12345] summarizer done: -") for line in lines)


def test_latest_summary_is_updated_while_small_and_a_new_row_starts_when_big():
    """Design B's rows, with a model that writes short summaries (room is left in the cap)."""
    roomy = SMALL.model_copy(update={"summary_max": Budget(chars=2_000)})
    small = roomy.model_copy(update={"update_below": Budget(chars=100_000)})
    big = roomy.model_copy(update={"update_below": Budget(chars=1)})
    history = agent_history(3)
    for policy, rows in ((small, 1), (big, 2)):
        model = FakeModel(default="**Investigating:** payments time out after deploy v4.18.")
        compactor = Compactor(LLMSummarizer(model), policy=policy, fallback=None)
        first = compactor.compact_sync(history)
        second = compactor.compact_sync(first.messages + agent_history(2)[1:])
        assert second.report.compacted, second.report.reason
        assert len(second.chain.rows) == rows
        assert len([m for m in second.messages if parse_summary_message(m)]) == 1


def test_the_whole_chain_stays_within_the_summary_cap_pass_after_pass():
    """Rows start only while the cap has room; past that they merge: the summary the model
    reads never exceeds the cap, however many passes (extractive rows fill their room)."""
    policy = SMALL.model_copy(update={"summary_max": Budget(chars=900)})
    compactor = Compactor(policy=policy)
    history = agent_history(1)
    for turn in range(12):
        history = history + agent_history(2)[1 + 5 * (turn % 2) : 6 + 5 * (turn % 2)]
        history = compactor.compact_sync(history).messages
        summary = next((m for m in history if parse_summary_message(m)), None)
        assert summary is None or len(summary.text) <= 900, (turn, len(summary.text))


def test_pinned_messages_and_standing_instructions_survive_verbatim():
    history = agent_history(4)
    pinned = user("Budget code is PRJ-7731. Keep it.", pinned=True)
    instruction = "Never restart production without asking me first."
    history[1] = user(f"{prose(20)}. {instruction}")
    history.insert(2, assistant("noted"))
    history.insert(3, pinned)
    history.insert(4, assistant("ok"))
    result = Compactor(policy=SMALL).compact_sync(history)
    assert result.report.compacted
    assert pinned in result.messages
    summary = result.messages[1].text
    assert instruction in summary
    assert result.chain.latest.instructions == (instruction,)


def test_newest_turn_over_the_keep_budget_masks_older_outputs_but_stays_valid():
    history = [user("earlier question"), assistant(prose(80, "host"))]
    history += [user("now investigate")]
    for n in range(4):
        history += [assistant(None, calls=[(f"c{n}", "logs")]), tool(f"c{n}", prose(60))]
    history += [assistant("done")]
    policy = Policy(trigger=Trigger(chars=1000), keep=Budget(chars=900))
    result = Compactor(policy=policy).compact_sync(history)
    assert result.report.compacted and result.report.masked >= 1
    validate_history(result.messages)
    masked = [m for m in result.messages if is_masked(m)]
    assert masked and all("elided" in m.text for m in masked)
    last_result = [m for m in result.messages if m.role == "tool"][-1]
    assert not is_masked(last_result)  # the latest tool group is untouched


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "Error: upstream returned 500",
        "I'm sorry, I cannot help with that.",
        "<|im_start|>assistant\nThe user asked about payments.",
        "summary " * 200,
        "The payments service " + "was slow and then it failed again " * 60,
    ],
    ids=["empty", "error", "refusal", "template", "repetition", "runaway"],
)
def test_bad_model_output_is_asked_once_more_then_leaves_history_unchanged(reply):
    history = agent_history()
    model = FakeModel([reply, reply])
    result = Compactor(LLMSummarizer(model), SMALL, fallback=None).compact_sync(history)
    assert not result.report.compacted
    assert result.report.path == "rejected"
    assert "summary rejected" in (result.report.reason or "")
    assert result.messages == history
    assert len(model.calls) == 2
    assert result.report.model_calls == 2 and len(result.report.usage) == 2


def test_a_rejected_summary_is_replaced_by_a_good_second_answer():
    history = agent_history()
    model = FakeModel(["", "**Investigating:** payments latency; db pool exhausted."])
    result = Compactor(LLMSummarizer(model), SMALL, fallback=None).compact_sync(history)
    assert result.report.path == "summarized"
    assert "db pool exhausted" in result.messages[1].text


def test_a_cut_off_answer_is_rejected():
    history = agent_history()
    model = FakeModel(default=Completion("The payments service was slow", "fake", truncated=True))
    result = Compactor(LLMSummarizer(model), SMALL, fallback=None).compact_sync(history)
    assert result.report.path == "rejected"
    assert "truncated" in (result.report.reason or "")


def test_model_failure_leaves_history_unchanged_without_a_fallback():
    history = agent_history()
    model = FakeModel([TimeoutError("model timed out")])
    result = Compactor(LLMSummarizer(model), SMALL, fallback=None).compact_sync(history)
    assert result.report.path == "rejected"
    assert "TimeoutError" in (result.report.reason or "")
    assert result.messages == history


def test_model_failure_falls_back_to_extractive_by_default_and_says_why():
    history = agent_history()
    model = FakeModel([BackendError("server down", kind="connection")])
    result = Compactor(LLMSummarizer(model), SMALL).compact_sync(history)
    report = result.report
    assert report.compacted and report.path == "fallback"
    assert report.strategy == "extractive"
    assert (report.reason or "").startswith("llm: server down")
    assert report.usage[0].error == "server down"
    validate_history(result.messages)
    assert result.messages[1].text.startswith("[recap summary")
    assert result.chain.latest is not None and result.chain.latest.strategy == "extractive"


def test_summary_longer_than_its_input_or_the_cap_is_rejected():
    history = agent_history()
    text = " ".join(f"fact{n} value{n}" for n in range(400))  # varied, so not repetitive
    model = FakeModel(default=text)
    result = Compactor(LLMSummarizer(model), SMALL, fallback=None).compact_sync(history)
    assert result.report.path == "rejected"
    assert "over_limit" in result.report.reason or "longer_than_input" in result.report.reason


def test_budget_counts_tool_schemas_and_the_system_prompt():
    history = [
        system(prose(8, "rule")),
        user(prose(12, "ask")),
        assistant(prose(12, "reply")),
        user(prose(12, "next")),
        assistant(prose(12, "last")),
    ]
    policy = Policy(trigger=Trigger(chars=600), keep=Budget(chars=200))
    compactor = Compactor(policy=policy)
    assert not compactor.compact_sync(history).report.compacted
    schemas = [{"type": "function", "function": {"name": "lookup", "description": "x" * 300}}]
    assert compactor.compact_sync(history, tools=schemas).report.compacted


def test_too_few_new_messages_since_the_last_summary_is_skipped():
    policy = SMALL.model_copy(update={"min_new_messages": 100})
    result = Compactor(policy=policy).compact_sync(agent_history())
    assert not result.report.compacted
    assert "fewer than 100" in (result.report.reason or "")


def test_trigger_all_needs_every_threshold():
    history = agent_history()
    size = Meter().messages(history)
    both = Trigger(chars=size.chars - 1, messages=size.messages + 5, mode="all")
    either = both.model_copy(update={"mode": "any"})
    assert not both.fires(size) and either.fires(size)
    result = Compactor(policy=Policy(trigger=both, keep=Budget(messages=5))).compact_sync(history)
    assert result.report.reason == "under the trigger threshold"


def test_a_session_compacted_turn_by_turn_stays_bounded():
    """However long the session, the summary the model reads stays under two caps:
    rows are merged into one cumulative update once the chain reaches summary_max."""
    policy = Policy(
        trigger=Trigger(chars=6_000),
        keep=Budget(chars=2_000),
        summary_max=Budget(chars=1_500),
        update_below=Budget(tokens=100),  # rows fill past it: new rows start
    )
    compactor = Compactor(policy=policy)
    view = [system("You investigate incidents.")]
    for n in range(40):
        view += [user(f"turn {n}: " + prose(40, f"svc{n}")), assistant(prose(80, f"host{n}"))]
        view = compactor.compact_sync(view).messages
        validate_history(view)
        summary = [m for m in view if m.text.startswith("[recap summary")]
        assert len(summary) <= 1
        if summary:
            assert len(summary[0].text) <= 2 * 1_500 + 400  # two caps and the row headers
        assert Meter().messages(view).chars <= 6_000 + 3_500
    chain = parse_summary_message(view[1])
    assert chain is not None and chain.rows[0].span is not None
    assert chain.rows[0].span[0] == 2  # message 1 is the system prompt: the whole record


def test_with_the_record_at_hand_an_update_folds_the_raw_messages_not_the_summary_text():
    """A rolling summary is no summary of summaries where the full log is kept."""
    from recap_memory.summarizers import ExtractiveSummarizer, FoldRequest

    class Recording(ExtractiveSummarizer):
        def __init__(self) -> None:
            self.requests: list[FoldRequest] = []

        async def fold(self, request):  # type: ignore[no-untyped-def]
            self.requests.append(request)
            return await super().fold(request)

    full = [m.replace(id=f"m{n}") for n, m in enumerate(agent_history(6))]
    summarizer = Recording()
    compactor = Compactor(summarizer, SMALL)
    view = compactor.compact_sync(full[:16]).messages
    first_fold = [m.id for m in summarizer.requests[-1].messages]
    compactor.compact_sync(view + full[16:], record=full)
    update = summarizer.requests[-1]
    assert update.previous and [m.id for m in update.record] == first_fold
    compactor.compact_sync(view + full[16:])
    assert summarizer.requests[-1].record == (), "without the record, the text is all there is"


async def test_a_long_pass_leaves_the_event_loop_free():
    """Planning, reading instructions and the extractive summary run in worker threads:
    a server's other requests (a health probe) are answered while a long pass runs."""
    import random

    rng = random.Random(0)
    words = "payments checkout latency shard replica failover invoice refund".split()
    history = [
        Message(
            role="user" if n % 2 == 0 else "assistant",
            content=" ".join(f"{rng.choice(words)}{rng.randint(0, 999)}" for _ in range(400)),
            id=n + 1,
        )
        for n in range(300)
    ]
    ticks = 0
    running = True

    async def probe() -> None:
        nonlocal ticks
        while running:
            await asyncio.sleep(0.001)
            ticks += 1

    prober = asyncio.create_task(probe())
    started = time.perf_counter()
    result = await Compactor().compact(history, chain=Chain())
    elapsed = time.perf_counter() - started
    running = False
    await prober
    assert result.report.compacted
    assert ticks >= 20 and ticks >= elapsed * 20, (ticks, elapsed)  # ≥ 1 per 50 ms of the pass
