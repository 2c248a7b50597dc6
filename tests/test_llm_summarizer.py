"""The llm strategy with the scripted fake: chunked folding, prompts, bounds."""

from __future__ import annotations

from recap_memory import Budget, Compactor, Policy, Trigger, approx_tokens
from recap_memory.llm import FakeModel
from recap_memory.summarizers import LLMSummarizer
from tests.conftest import assistant, user


def _history(turns: int) -> list:
    history = []
    for n in range(turns):
        history += [
            user(f"question {n}: what happened to order ORD-{n:05d} shipped from depot D{n % 7}?"),
            assistant(
                f"Order ORD-{n:05d} left depot D{n % 7} on day {n} with {n * 3} parcels. "
                + " ".join(f"detail{n}-{k}" for k in range(40))
            ),
        ]
    return history


def _short_summary(messages):
    return "The user asked about orders; the assistant reported depots and parcel counts."


def test_a_span_far_larger_than_the_window_is_folded_in_chunks_without_dropping_anything():
    history = _history(120)  # ~60k chars, the model's window is 1,024 tokens
    model = FakeModel(default=_short_summary, context_window=1024)
    policy = Policy(
        trigger=Trigger(chars=5_000), keep=Budget(chars=1_000), summary_max=Budget(chars=600)
    )
    result = Compactor(LLMSummarizer(model), policy).compact_sync(history)

    assert result.report.compacted, result.report.reason
    assert len(model.calls) > 10
    assert all(c.prompt_tokens + c.options.max_tokens <= 1024 for c in model.calls)
    prompts = "\n".join(c.messages[0]["content"] for c in model.calls)
    first, last = result.report.covered
    words = set(prompts.split())
    for message in history[first : last + 1]:  # every folded word reached the model
        assert set(message.text.split()) <= words
    assert "Here is a summary of a conversation so far" in model.calls[1].messages[0]["content"]
    assert result.report.model_calls == len(model.calls)


def test_generation_options_follow_design_b():
    model = FakeModel(default=_short_summary)
    policy = Policy(trigger=Trigger(chars=2_000), keep=Budget(chars=500))
    Compactor(LLMSummarizer(model), policy).compact_sync(_history(10))
    assert model.calls[0].options.temperature == 0.2
    assert model.calls[0].options.max_tokens == 500


def test_a_window_too_small_for_the_prompt_is_an_error_not_a_loop():
    model = FakeModel(default=_short_summary, context_window=600)
    policy = Policy(trigger=Trigger(chars=2_000), keep=Budget(chars=500))
    result = Compactor(LLMSummarizer(model), policy, fallback=None).compact_sync(_history(10))
    assert result.report.path == "rejected"
    assert "window" in (result.report.reason or "")
    assert model.calls == []


class DenseTokenizerModel(FakeModel):
    """A model whose own tokenizer counts twice what recap's estimate does."""

    async def count_tokens(self, messages):
        return sum(2 * approx_tokens(m["content"]) for m in messages)


def test_a_backend_that_counts_more_tokens_gets_smaller_chunks_never_an_overflow():
    model = DenseTokenizerModel(default=_short_summary, context_window=2048)
    policy = Policy(
        trigger=Trigger(chars=5_000), keep=Budget(chars=1_000), summary_max=Budget(chars=600)
    )
    result = Compactor(LLMSummarizer(model), policy, fallback=None).compact_sync(_history(40))
    assert result.report.path == "summarized", result.report.reason
    for call in model.calls:
        own_count = 2 * approx_tokens(call.messages[0]["content"])
        assert own_count + call.options.max_tokens <= model.context_window


def test_an_answer_that_echoes_its_input_is_rejected():
    history = _history(10)
    echo = "\n".join(m.text for m in history[:10] if m.role == "user")
    model = FakeModel(default=lambda messages: echo)
    policy = Policy(
        trigger=Trigger(chars=2_000), keep=Budget(chars=500), summary_max=Budget(chars=600)
    )
    result = Compactor(LLMSummarizer(model), policy, fallback=None).compact_sync(history)
    assert result.report.path == "rejected"
    assert "echo" in (result.report.reason or "")
