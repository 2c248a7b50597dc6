"""Rolling evaluation: a conversation as people use recap, one message per turn.

Each message is appended to the history and the library's entry point is called
(``Compactor(summarizer, policy).compact_sync(history)``); what it returns is the
history the next turn appends to. The trigger and the keep budget are shares of
the conversation's foldable characters. Measured at the end: the final context's
size, answer retention (LoCoMo: token recall and exact phrase, and recall on the
questions whose evidence lies in the first third of the conversation), beside the
newest messages alone at the same size (the noise floor); over the run: passes,
the largest context ÷ the trigger, the readable share of the last summary, the
mean time per call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recap_memory.compactor import Compactor
from recap_memory.counting import Meter
from recap_memory.eval import locomo
from recap_memory.eval.budget import foldable_chars
from recap_memory.eval.readability import summary_readable
from recap_memory.messages import Message
from recap_memory.policy import Budget, Policy, Trigger
from recap_memory.summarizers.base import Summarizer

DEFAULT_TRIGGER = 0.20
DEFAULT_KEEP = 0.07


@dataclass(frozen=True)
class Rolled:
    """One conversation fed turn by turn."""

    messages: list[Message]
    """The final context."""
    passes: int
    worst: float
    """The largest context over the run ÷ the trigger (above 1: over the budget)."""
    call_ms: float
    """Mean milliseconds per call of the entry point."""


def rolling_policy(messages: Sequence[Message], trigger: float, keep: float) -> Policy:
    """Trigger and keep as shares of ``messages``' foldable characters."""
    if not 0 < keep < trigger < 1:
        raise ValueError("keep and trigger are shares of the conversation, keep below trigger")
    whole = foldable_chars(messages)
    return Policy(
        trigger=Trigger(chars=max(2, int(whole * trigger))),
        keep=Budget(chars=max(1, int(whole * keep))),
    )


def roll(
    messages: Sequence[Message],
    compactor: Compactor,
    trigger_chars: int,
    *,
    with_record: bool = False,
) -> Rolled:
    """Feed ``messages`` one per turn through ``compactor`` (see the module docstring);
    ``with_record``: the caller keeps the full log and hands it over each turn."""
    meter = Meter()
    history: list[Message] = []
    passes, worst, spent = 0, 0.0, 0.0
    for n, message in enumerate(messages, 1):
        history.append(message)
        started = time.perf_counter()
        record = messages[:n] if with_record else None
        result = compactor.compact_sync(history, record=record)
        spent += time.perf_counter() - started
        passes += result.report.compacted
        history = result.messages
        worst = max(worst, meter.messages(history).chars / trigger_chars)
    return Rolled(history, passes, worst, spent * 1000 / max(1, len(messages)))


@dataclass
class RollingScore:
    """Rolling figures over LoCoMo conversations (questions pooled)."""

    score: locomo.Score
    early: locomo.Tally
    floor: locomo.Score
    """The newest messages alone at the final context's size."""
    floor_early: locomo.Tally
    passes: list[int] = field(default_factory=list)
    worst: list[float] = field(default_factory=list)
    call_ms: list[float] = field(default_factory=list)
    readable: list[float] = field(default_factory=list)

    def __add__(self, other: RollingScore) -> RollingScore:
        return RollingScore(
            self.score + other.score,
            self.early + other.early,
            self.floor + other.floor,
            self.floor_early + other.floor_early,
            self.passes + other.passes,
            self.worst + other.worst,
            self.call_ms + other.call_ms,
            self.readable + other.readable,
        )

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain data."""
        n = max(1, len(self.passes))
        return {
            **self.score.as_dict(),
            "early_token_recall": self.early.means()["token_recall"],
            "early_questions": self.early.questions,
            "passes": sum(self.passes) / n,
            "worst_context_over_trigger": max(self.worst, default=0.0),
            "readable": sum(self.readable) / len(self.readable) if self.readable else 1.0,
            "call_ms": sum(self.call_ms) / n,
            "floor": {
                "size": self.floor.size,
                "token_recall": self.floor.token_recall,
                "exact": self.floor.exact,
                "early_token_recall": self.floor_early.means()["token_recall"],
            },
        }


def evaluate_locomo(
    samples: Sequence[Mapping[str, Any]],
    summarizer: Summarizer,
    trigger: float = DEFAULT_TRIGGER,
    keep: float = DEFAULT_KEEP,
    advance: Callable[[], None] = lambda: None,
    *,
    with_record: bool = False,
) -> RollingScore:
    """Each LoCoMo conversation fed turn by turn (see the module docstring);
    ``with_record``: the full log handed over each turn (the service's case)."""
    result: RollingScore | None = None
    for sample in samples:
        messages = locomo.conversation_messages(sample)
        policy = rolling_policy(messages, trigger, keep)
        assert policy.trigger.chars is not None
        rolled = roll(
            messages, Compactor(summarizer, policy), policy.trigger.chars, with_record=with_record
        )
        one = score_final(
            sample,
            messages,
            rolled.messages,
            worst=rolled.worst,
            passes=rolled.passes,
            call_ms=rolled.call_ms,
        )
        result = one if result is None else result + one
        advance()
    assert result is not None, "no conversation to evaluate"
    return result


def score_final(
    sample: Mapping[str, Any],
    messages: Sequence[Message],
    context: Sequence[Message],
    *,
    worst: float,
    passes: int,
    call_ms: float,
) -> RollingScore:
    """One conversation's figures from its final ``context`` (messages kept verbatim are
    recognized by their text, so a context read back from the service scores alike)."""
    verbatim = {m.text for m in context}
    folded = frozenset(m.id for m in messages if m.id is not None and m.text not in verbatim)
    size = foldable_chars(context) / max(1, foldable_chars(messages))
    scored = locomo.score(sample, _text(context), size, folded)
    tail = locomo.newest_messages(messages, foldable_chars(context))
    floor = locomo.score(
        sample,
        _text(tail),
        foldable_chars(tail) / max(1, foldable_chars(messages)),
        _ids(messages) - _ids(tail),
    )
    readable = summary_readable(context, _text(messages))
    early_ids = _first_third(messages)
    return RollingScore(
        score=replace(scored, readability=(readable,) if readable is not None else ()),
        early=_early(sample, _text(context), early_ids),
        floor=floor,
        floor_early=_early(sample, _text(tail), early_ids),
        passes=[passes],
        worst=[worst],
        call_ms=[call_ms],
        readable=[readable] if readable is not None else [],
    )


def _early(sample: Mapping[str, Any], context: str, early_ids: frozenset[str]) -> locomo.Tally:
    """Retention on the questions whose evidence all lies in the first third."""
    scored = locomo.score(sample, context, 0.0, early_ids, only_evidence_in=early_ids)
    return scored.all


def _first_third(messages: Sequence[Message]) -> frozenset[str]:
    return frozenset(str(m.id) for m in messages[: len(messages) // 3] if m.id is not None)


def _ids(messages: Sequence[Message]) -> frozenset[str | int]:
    return frozenset(m.id for m in messages if m.id is not None)


def _text(messages: Sequence[Message]) -> str:
    return "\n".join(m.text for m in messages)
