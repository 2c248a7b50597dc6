"""Compacting one conversation to a budget: the measure every evaluation shares.

The budget is a share of what can be folded: the characters (as the model reads
them, tool-call arguments included) of the non-system messages. System messages
are never folded, so they ride along outside the budget (τ-bench trajectories
open with a 6,000-character policy that would otherwise eat most of it). The
recent turns kept verbatim get up to ``keep_share`` of the budget — whole turns,
so usually less — and the summary gets the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recap_memory.compactor import Compactor
from recap_memory.counting import Meter
from recap_memory.messages import Message, is_valid_history
from recap_memory.planner import Skip, plan_compaction
from recap_memory.policy import MIN_SUMMARY_CHARS, Budget, Policy, Trigger
from recap_memory.summarizers.base import Summarizer


@dataclass(frozen=True)
class Compacted:
    """One conversation compacted to a budget."""

    messages: list[Message]
    """The context the model would read (system messages included)."""
    size: float
    """Foldable characters of that context ÷ those of the whole conversation."""
    valid: bool
    """Every tool result still follows its call."""
    compacted: bool
    folded_ids: frozenset[str | int]
    """Ids (or input positions) of the messages the summary stands in for."""
    model_input_tokens: int
    reason: str | None = None
    """Why nothing was compacted, when nothing was."""


def foldable_chars(messages: Sequence[Message], meter: Meter | None = None) -> int:
    """Characters of the non-system messages, as the model reads them."""
    return (meter or Meter()).messages(m for m in messages if not m.is_system).chars


def budget_policy(messages: Sequence[Message], budget: float, keep_share: float) -> Policy:
    """A policy that fires now, keeps ``keep_share`` of the budget and gives the summary
    the rest of it."""
    if not (0 < budget < 1 and 0 < keep_share < 1):
        raise ValueError("budget and keep share are fractions between 0 and 1")
    meter = Meter()
    room = int(foldable_chars(messages, meter) * budget)
    policy = Policy(
        trigger=Trigger(messages=1),
        keep=Budget(chars=max(1, int(room * keep_share))),
        summary_max=Budget(chars=max(MIN_SUMMARY_CHARS, room - int(room * keep_share))),
    )
    plan = plan_compaction(messages, policy, meter)
    if isinstance(plan, Skip):
        return policy
    return policy.model_copy(
        update={"summary_max": Budget(chars=max(MIN_SUMMARY_CHARS, room - plan.kept.chars))}
    )


def compact_to_budget(
    messages: Sequence[Message], compactor: Compactor, budget: float, keep_share: float = 0.5
) -> Compacted:
    """Compact ``messages`` once with ``compactor``'s strategy to ``budget`` of their size."""
    policy = budget_policy(messages, budget, keep_share)
    result = compactor.with_policy(policy).compact_sync(messages)
    report = result.report
    folded: frozenset[str | int] = frozenset()
    if report.covered is not None:
        first, last = report.covered
        folded = frozenset(
            m.id if m.id is not None else i
            for i, m in enumerate(messages[first : last + 1], start=first)
            if not m.is_system
        )
    whole = foldable_chars(messages)
    return Compacted(
        messages=result.messages,
        size=foldable_chars(result.messages) / whole if whole else 1.0,
        valid=is_valid_history(result.messages),
        compacted=report.compacted,
        folded_ids=folded,
        model_input_tokens=sum(u.prompt_tokens or 0 for u in report.usage),
        reason=None if report.compacted else report.reason,
    )


def strategy_compactor(summarizer: Summarizer) -> Compactor:
    """A compactor for evaluation: the strategy alone, no fallback hiding its failures."""
    return Compactor(summarizer, fallback=None)
