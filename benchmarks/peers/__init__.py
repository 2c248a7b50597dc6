"""``python -m benchmarks peers``: recap beside LangChain's ``SummarizationMiddleware`` and
LangMem's ``summarize_messages``, on the same inputs, in the same process, behind the same
summarizer.

The summarizer is one :class:`~recap_memory.integrations.extractive_chat.ExtractiveChatModel`
per run of an engine, all with the same cap, so differences come from each engine's
policy (where it cuts, what it sends the model, what it keeps), not from the model
(:mod:`.engines`: recap goes through the same model).

Every engine gets the same budget (:mod:`.budget`), in LangChain's default token count
(``count_tokens_approximately``; recap measures with a meter that counts the same). The
peers run with their defaults otherwise — which matters: LangChain trims what it sends
the summarizer to its newest ``trim_tokens_to_summarize`` (4,000) tokens, LangMem to its
``max_tokens``; LangMem folds everything up to the point where the history crossed its
threshold (it has no separate keep setting). As in ``create_agent``, LangChain's state
holds no system prompt: it is kept outside and put back.

Rows (:mod:`.rows`), each reported as recap ÷ peer (same run, so machine noise reaches
all alike):

- valid-history rate on τ-bench trajectories and on generated sessions with parallel
  tool calls at the cut, one compaction each (:mod:`.validity`);
- LoCoMo answer token recall after one compaction at the same budget (:mod:`.recall`);
- the per-turn call when nothing is due, at 10 / 1,000 / 100,000 messages, through
  each path recap's users call (``compact_sync`` on a list and on a Conversation,
  ``RecapMiddleware.before_model``), and its growth (:mod:`.checks`);
- over whole LoCoMo conversations fed one message per turn (:mod:`.sessions`): the
  answer recall of the context after the last turn (rolling recall, each peer also
  reading all it folds) and the summarizer input tokens.

This module runs the whole benchmark.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from benchmarks.peers.budget import PeerBudget
from benchmarks.peers.checks import CheckCost, check_costs
from benchmarks.peers.engines import ENGINES, READS_ALL
from benchmarks.peers.recall import Recall, locomo_recall
from benchmarks.peers.rows import Row, compared_rows
from benchmarks.peers.sessions import Session, session_costs
from benchmarks.peers.validity import Validity, parallel_cases, taubench_cases, valid_histories

__all__ = ["NOTES", "Options", "PeersFigures", "Session", "run"]

NOTES = [
    "Same model behind all three: ExtractiveChatModel (recap's extractive summary of the text "
    "it is sent, prompt wording removed), one per run with the budget's summary cap.",
    "Budgets in count_tokens_approximately tokens; recap counts the same (PeerMeter).",
    "LangChain defaults that matter: trim_tokens_to_summarize=4000 (the summarizer sees only "
    "the newest 4,000 tokens of what it folds), its long default prompt; system prompt kept "
    "outside the state, as create_agent does.",
    "LangMem defaults that matter: max_tokens_before_summary = max_tokens, so it folds every "
    "message up to the threshold crossing (no keep setting), and trims the summarizer's input "
    "to max_tokens.",
]

SESSION_BUDGET = PeerBudget(keep=2_000, summary=1_000, trigger=6_000)
"""The budget of every engine over whole conversations."""


@dataclass(frozen=True)
class Options:
    """How big a run is (the defaults: all the data)."""

    locomo_samples: int = 5
    tau_records: int = 100
    generated: int = 50
    session_samples: int = 5
    check_sizes: tuple[int, ...] = (10, 1_000, 100_000)
    check_samples: int = 5
    locomo_fraction: float = 0.2
    tau_fraction: float = 0.3
    session_budget: PeerBudget = SESSION_BUDGET
    seed: int = 0


@dataclass(frozen=True)
class PeersFigures:
    """Everything one run measured."""

    options: Options
    rows: list[Row]
    taubench: dict[str, Validity]
    parallel: dict[str, Validity]
    locomo: dict[str, Recall]
    sessions: dict[str, Session]
    checks: list[CheckCost]
    elapsed_s: float
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain JSON-able data."""
        data = asdict(self)
        data["rows"] = [row.as_dict() for row in self.rows]
        return data


def run(
    locomo: Sequence[Mapping[str, Any]], tau: Sequence[Mapping[str, Any]], options: Options
) -> PeersFigures:
    """Run every comparison on the given data (LoCoMo samples, τ-bench records)."""
    started = time.perf_counter()
    samples = list(locomo[: options.locomo_samples])
    tau_cases = taubench_cases(tau[: options.tau_records], options.tau_fraction)
    par_cases = parallel_cases(options.generated, options.seed)
    taubench = {e: valid_histories(tau_cases, e) for e in ENGINES}
    parallel = {e: valid_histories(par_cases, e) for e in ENGINES}
    recall = {
        e: locomo_recall(samples, e, options.locomo_fraction)
        for e in (*ENGINES, *READS_ALL.values())
    }
    sessions = {
        e: session_costs(samples[: options.session_samples], e, options.session_budget)
        for e in (*ENGINES, *READS_ALL.values())
    }
    checks = [check_costs(n, options.check_samples) for n in options.check_sizes]
    rows = compared_rows(taubench, parallel, recall, options.locomo_fraction, sessions, checks)
    return PeersFigures(
        options, rows, taubench, parallel, recall, sessions, checks,
        round(time.perf_counter() - started, 3), notes=NOTES,
    )  # fmt: skip
