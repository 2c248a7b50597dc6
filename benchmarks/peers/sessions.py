"""Whole conversations: what each engine costs when a LoCoMo conversation is fed to it
one message per turn, as an agent would, and what its context still holds of the
answers at the end (rolling recall: every fold of the session compounded)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.peers.budget import PeerBudget
from benchmarks.peers.engines import TURNS
from recap_memory.eval.locomo import conversation_messages, score


@dataclass(frozen=True)
class Session:
    """What an engine cost over whole conversations fed one message per turn."""

    input_tokens: int
    """Tokens sent to the summarizer, prompts included."""
    model_calls: int
    folds: int
    mean_context_tokens: float
    """Mean size of what the agent's model would receive per turn."""
    token_recall: float = 0.0
    """LoCoMo answer token recall of the context after the last turn (question-weighted)."""


def session_costs(samples: Sequence[Mapping[str, Any]], engine: str, budget: PeerBudget) -> Session:
    """Summarizer input over whole LoCoMo conversations, one model per conversation."""
    input_tokens = calls = folds = questions = 0
    recall = 0.0
    contexts: list[int] = []
    for sample in samples:
        model = budget.model()
        feed = TURNS[engine](budget, model)
        messages = conversation_messages(sample)
        for message in messages:
            folded, context = feed.turn(message)
            folds += folded
            contexts.append(context)
        input_tokens += model.input_tokens
        calls += len(model.calls)
        text = feed.context()
        result = score(sample, text, len(text) / len("\n".join(m.text for m in messages)))
        recall += result.token_recall * result.questions
        questions += result.questions
    return Session(
        input_tokens, calls, folds, statistics.fmean(contexts), recall / max(1, questions)
    )
