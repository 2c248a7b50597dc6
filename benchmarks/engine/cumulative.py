"""Cumulative work: a long conversation fed turn by turn and compacted whenever the
policy says it is due, as an app would, with the ``llm`` strategy over a recording
:class:`~recap_memory.llm.fake.FakeModel`; the baseline re-summarizes the whole history from
scratch at the same triggers, over the same kind of model. Both are reported as model
input tokens (counted from the prompts actually sent) per conversation token, at
:data:`SHARES` of the conversation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from benchmarks.conversations import split_turns
from benchmarks.engine.errors import BenchFailed
from benchmarks.engine.fake_summaries import write_summary
from benchmarks.engine.options import Options
from recap_memory.compactor import Compactor
from recap_memory.counting import Meter, Size
from recap_memory.llm.fake import FakeModel
from recap_memory.messages import Message
from recap_memory.policy import Budget, Policy, Trigger
from recap_memory.summarizers.base import FoldRequest
from recap_memory.summarizers.llm import LLMSummarizer

SHARES = (0.25, 0.5, 0.75, 1.0)
"""Points of the conversation at which cumulative work is reported."""
MIN_PASSES = 8
"""A conversation should compact about this many times (see :func:`cumulative_policy`)."""


@dataclass(frozen=True)
class Checkpoint:
    """Cumulative figures after the first ``turns`` turns."""

    share: float
    turns: int
    conversation_tokens: int
    compactions: int
    recap_input_tokens: int
    baseline_input_tokens: int
    recap_ratio: float
    """recap's model input tokens ÷ conversation tokens."""
    baseline_ratio: float
    """The re-summarize-everything baseline's input tokens ÷ conversation tokens."""


@dataclass(frozen=True)
class Cumulative:
    """One conversation fed turn by turn: recap's chain against re-summarizing everything."""

    name: str
    turns: int
    messages: int
    conversation_tokens: int
    trigger_chars: int
    keep_chars: int
    compactions: int
    recap_calls: int
    baseline_calls: int
    checkpoints: tuple[Checkpoint, ...]

    @property
    def final(self) -> Checkpoint:
        """The figures at the end of the conversation."""
        return self.checkpoints[-1]

    def growth(self, which: Literal["recap", "baseline"]) -> float:
        """The ratio at 100% ÷ at 50% of the conversation (about 1 when the work is linear,
        about 2 when it is quadratic; 0 when nothing compacted by the half)."""
        half = next(c for c in self.checkpoints if c.share == 0.5)
        before = half.recap_ratio if which == "recap" else half.baseline_ratio
        after = self.final.recap_ratio if which == "recap" else self.final.baseline_ratio
        return after / before if before else 0.0


def cumulative_policy(options: Options, chars: int) -> Policy:
    """The trigger and keep budget of ``options`` for a conversation of ``chars`` characters
    (other settings at their defaults). Both are scaled down, in proportion, for a
    conversation too short to compact :data:`MIN_PASSES` times or so under them."""
    trigger = max(2, min(options.trigger_chars, chars // MIN_PASSES))
    keep = max(1, options.keep_chars * trigger // options.trigger_chars)
    return Policy(trigger=Trigger(chars=trigger), keep=Budget(chars=keep))


def _input_tokens(model: FakeModel) -> int:
    """Tokens of every prompt ``model`` was sent."""
    return sum(call.prompt_tokens for call in model.calls)


async def measure_cumulative(
    name: str, messages: Sequence[Message], options: Options
) -> Cumulative:
    """Feed ``messages`` turn by turn under :func:`cumulative_policy` (see the module
    docstring); :class:`BenchFailed` when recap's summary is rejected."""
    meter, window = Meter(), options.window
    history = [m.replace(id=i) for i, m in enumerate(messages)]
    turns = split_turns(history)
    policy = cumulative_policy(options, meter.messages(history).chars)
    recap_model = FakeModel(default=write_summary, context_window=window, name="fake-recap")
    baseline_model = FakeModel(default=write_summary, context_window=window, name="fake-full")
    compactor = Compactor(LLMSummarizer(recap_model), policy, fallback=None)
    baseline = LLMSummarizer(baseline_model)
    marks = {max(1, math.ceil(share * len(turns))): share for share in SHARES}
    view: list[Message] = []
    size, fed, new, compactions = Size(), Size(), 0, 0
    checkpoints = []
    for n, turn in enumerate(turns, 1):
        view.extend(turn)
        size, fed, new = size + meter.messages(turn), fed + meter.messages(turn), new + len(turn)
        if policy.is_due(size, new):
            result = await compactor.compact(view)
            report = result.report
            if report.path == "rejected":
                raise BenchFailed(f"turn {n}: {report.reason}")
            if report.compacted and report.covered_ids is not None:
                view, size, new = result.messages, meter.messages(result.messages), 0
                compactions += 1
                last = int(report.covered_ids[1])
                span = [m for m in history[: last + 1] if not m.is_system]
                await baseline.fold(FoldRequest(span, policy.summary_chars(), meter=meter))
        if n in marks:
            recap_tokens, baseline_tokens = (
                _input_tokens(recap_model),
                _input_tokens(baseline_model),
            )
            checkpoints.append(Checkpoint(
                marks[n], n, fed.tokens, compactions, recap_tokens, baseline_tokens,
                recap_tokens / fed.tokens, baseline_tokens / fed.tokens,
            ))  # fmt: skip
    trigger, keep = policy.trigger.chars or 0, policy.keep.value
    return Cumulative(
        name, len(turns), len(history), fed.tokens, trigger, keep, compactions,
        len(recap_model.calls), len(baseline_model.calls), tuple(checkpoints),
    )  # fmt: skip
