"""Valid histories: how many histories each engine leaves valid
(:func:`~recap_memory.messages.validate_history`) after one compaction, on τ-bench trajectories
and on generated sessions cut inside a parallel tool-call group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.conversations import parallel_sessions
from benchmarks.peers.budget import PeerBudget, system_tokens, tokens
from benchmarks.peers.engines import ONCE
from recap_memory.errors import InvalidHistoryError
from recap_memory.eval.taubench import trajectory_messages
from recap_memory.messages import Message, validate_history

Case = tuple[list[Message], PeerBudget]
"""A history and the budget every engine compacts it to."""


@dataclass(frozen=True)
class Validity:
    """How many histories an engine left valid after one compaction each."""

    histories: int
    valid: int
    compacted: int
    errors: int
    model_calls: int
    caps: tuple[int, ...]
    """The distinct caps (characters) of the shared models this engine ran with."""
    first_problem: str | None = None

    @property
    def rate(self) -> float:
        """Share of histories left valid (an engine error counts as not valid)."""
        return self.valid / self.histories if self.histories else 0.0


def taubench_cases(records: Sequence[Mapping[str, Any]], fraction: float) -> list[Case]:
    """τ-bench trajectories (messages given ids) with ``fraction`` of their tokens as budget."""
    cases = []
    for record in records:
        messages = [m.replace(id=f"m{i}") for i, m in enumerate(trajectory_messages(record))]
        cases.append((messages, PeerBudget.share(messages, fraction)))
    return cases


def parallel_cases(count: int, seed: int = 0) -> list[Case]:
    """Generated sessions whose keep budget ends exactly inside a parallel-call group."""
    cases = []
    for case in parallel_sessions(count, seed):
        kept = tokens(case.messages[case.cut :])
        budget = PeerBudget(keep=kept, summary=kept, system=system_tokens(case.messages))
        cases.append((case.messages, budget))
    return cases


def valid_histories(cases: Sequence[Case], engine: str) -> Validity:
    """Run ``engine`` once on every case and check each resulting history."""
    valid = compacted = errors = calls = 0
    caps: set[int] = set()
    problem = None
    for n, (messages, budget) in enumerate(cases):
        model = budget.model()
        caps.add(model.max_chars)
        try:
            view = ONCE[engine](messages, budget, model)
        except Exception as exc:  # an engine's failure is a figure, not a crash
            errors += 1
            problem = problem or f"history {n}: {type(exc).__name__}: {exc}"
            continue
        calls += len(model.calls)
        compacted += _texts(view) != _texts(messages)
        try:
            validate_history(view, source=f"history {n}")
            valid += 1
        except InvalidHistoryError as exc:
            problem = problem or str(exc)
    return Validity(len(cases), valid, compacted, errors, calls, tuple(sorted(caps)), problem)


def _texts(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """What tells a history from its compacted view: each message's role and text."""
    return [(m.role, m.countable_text) for m in messages]
