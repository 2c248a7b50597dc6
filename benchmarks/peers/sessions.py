"""Whole conversations: what each engine costs when a LoCoMo conversation is fed to it
one message per turn, as an agent would."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.peers.budget import PeerBudget
from benchmarks.peers.engines import TURNS
from recap_memory.eval.locomo import conversation_messages


@dataclass(frozen=True)
class Session:
    """What an engine cost over whole conversations fed one message per turn."""

    input_tokens: int
    """Tokens sent to the summarizer, prompts included."""
    model_calls: int
    folds: int
    mean_context_tokens: float
    """Mean size of what the agent's model would receive per turn."""


def session_costs(samples: Sequence[Mapping[str, Any]], engine: str, budget: PeerBudget) -> Session:
    """Summarizer input over whole LoCoMo conversations, one model per conversation."""
    input_tokens = calls = folds = 0
    contexts: list[int] = []
    for sample in samples:
        model = budget.model()
        turn = TURNS[engine](budget, model)
        for message in conversation_messages(sample):
            folded, context = turn(message)
            folds += folded
            contexts.append(context)
        input_tokens += model.input_tokens
        calls += len(model.calls)
    return Session(input_tokens, calls, folds, statistics.fmean(contexts))
