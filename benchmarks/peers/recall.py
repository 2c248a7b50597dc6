"""LoCoMo answer recall: how much of the answers each engine's context still holds after
one compaction to the same share of the conversation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.peers.budget import PeerBudget
from benchmarks.peers.engines import ONCE
from recap_memory.eval.locomo import conversation_messages, score


@dataclass(frozen=True)
class Recall:
    """Answer retention of an engine's context (question-weighted over samples)."""

    token_recall: float
    exact: float
    size: float
    """Characters of the context ÷ characters of the whole conversation."""
    questions: int
    model_calls: int
    read_share: float
    """≈ Characters of conversation text the summarizer was sent ÷ characters folded
    (below 1: part of what was folded away was never read, e.g. trimmed by the engine)."""


def locomo_recall(samples: Sequence[Mapping[str, Any]], engine: str, fraction: float) -> Recall:
    """LoCoMo answer retention after one compaction to ``fraction`` of each conversation."""
    recall = exact = size = 0.0
    questions = calls = read = folded = 0
    for sample in samples:
        messages = conversation_messages(sample)
        budget = PeerBudget.share(messages, fraction)
        model = budget.model()
        view = ONCE[engine](messages, budget, model)
        context = "\n".join(m.text for m in view)
        share = len(context) / len("\n".join(m.text for m in messages))
        result = score(sample, context, share)
        recall += result.token_recall * result.questions
        exact += result.exact * result.questions
        questions += result.questions
        calls += len(model.calls)
        read += sum(c.text_chars for c in model.calls)
        kept = {m.id for m in view}
        folded += sum(len(m.text) for m in messages if m.id not in kept)
        size += share
    n = len(samples)
    return Recall(
        recall / questions, exact / questions, size / n, questions, calls, read / max(1, folded)
    )
