"""One evaluation run: which data set a file holds, every strategy at the chosen budget,
the reference rows, and the retention-vs-budget curve.

The ``llm`` and ``hybrid`` rows need a model. Without one configured they use a
stand-in (:class:`~recap_memory.integrations.extractive_chat.ExtractiveChatModel`, which
answers each prompt with an extractive summary of the text in it) through the
LangChain backend, so they measure recap's LLM path — prompts, chunking,
validation — rather than a model's writing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from recap_memory.errors import ConfigurationError, InputError
from recap_memory.eval import agent_session, dialogsum, locomo, rolling, taubench
from recap_memory.eval.budget import strategy_compactor
from recap_memory.llm.base import ChatModel
from recap_memory.summarizers import STRATEGIES, Summarizer, make_summarizer

Dataset = Literal["locomo", "taubench", "dialogsum"]
DEFAULT_BUDGET: dict[Dataset, float] = {"locomo": 0.2, "taubench": 0.3, "dialogsum": 0.2}
HEADLINE: dict[Dataset, str] = {
    "locomo": "token_recall",
    "taubench": "id_value_recall",
    "dialogsum": "rougeL",
}
"""The figure each data set's curve and targets are about."""
CURVE_BUDGETS = (0.1, 0.2, 0.3, 0.4, 0.5)
TARGETS: dict[Dataset, tuple[float, str]] = {
    "locomo": (0.75, "LoCoMo token recall at 20% budget, default strategy"),
    "taubench": (0.70, "τ-bench ID/value recall at 30% budget with 100% valid histories"),
}


def load(path: str, text: str) -> tuple[Dataset, list[Any]]:
    """The data set a file holds, recognized by its content, and its records."""
    if dialogsum.looks_like_dialogsum(text):
        return "dialogsum", dialogsum.parse(text)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"not JSON or JSON lines: {exc}", where=path) from exc
    if locomo.looks_like_locomo(data):
        return "locomo", data
    if taubench.looks_like_taubench(data):
        return "taubench", data
    raise InputError(
        "not a data set recap evaluates: expected LoCoMo (objects with conversation and qa), "
        "τ-bench (objects with traj and info) or DialogSum (JSON lines with dialogue and "
        "summary)",
        where=path,
    )


def stand_in_model() -> ChatModel:
    """The offline model behind the ``llm`` and ``hybrid`` rows when none is configured."""
    try:
        from recap_memory.integrations.extractive_chat import ExtractiveChatModel
        from recap_memory.llm.langchain import LangChainModel
    except ImportError as exc:  # langchain-core is an extra
        raise ConfigurationError(
            "the llm and hybrid rows need langchain-core for their stand-in model: "
            "pip install 'recap-memory[eval]', or give --llm, or leave those strategies out"
        ) from exc
    return LangChainModel(ExtractiveChatModel(max_chars=1_000_000), context_window=128_000)


def summarizer_for(strategy: str, model: ChatModel | None) -> Summarizer:
    """The strategy's summarizer; model strategies get ``model`` or the stand-in."""
    if strategy not in STRATEGIES:
        raise ConfigurationError(f"unknown strategy {strategy!r}; choose from {STRATEGIES}")
    needs_model = strategy in ("llm", "hybrid")
    return make_summarizer(strategy, (model or stand_in_model()) if needs_model else None)


@dataclass
class Run:
    """Everything one ``recap eval`` measured (see :meth:`as_dict`)."""

    dataset: Dataset
    budget: float
    keep_share: float
    records: int
    strategies: dict[str, dict[str, Any]] = field(default_factory=dict)
    references: dict[str, dict[str, Any]] = field(default_factory=dict)
    curve: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    model: str = "stand-in (extractive chat model)"

    @property
    def headline(self) -> str:
        """The figure the curve and the target are about."""
        return HEADLINE[self.dataset]

    def target(self) -> dict[str, Any] | None:
        """The issue's target for this data set, and whether the default strategy met it."""
        if self.dataset not in TARGETS or "extractive" not in self.strategies:
            return None
        floor, what = TARGETS[self.dataset]
        row = self.strategies["extractive"]
        value = row[self.headline]
        met = value >= floor and row.get("valid_histories", 1.0) == 1.0
        return {"what": what, "floor": floor, "value": value, "met": met}

    def as_dict(self) -> dict[str, Any]:
        """The run as plain data (what ``--out`` writes)."""
        return {
            "dataset": self.dataset,
            "budget": self.budget,
            "keep_share": self.keep_share,
            "records": self.records,
            "model": self.model,
            "headline": self.headline,
            "strategies": self.strategies,
            "references": self.references,
            "curve": self.curve,
            "target": self.target(),
        }


ROLLING_TARGETS: dict[Dataset, dict[str, float]] = {
    "locomo": {"token_recall": 0.70, "early_token_recall": 0.65, "readable": 0.80},
    "taubench": {"facts_found_share": 1.0, "valid_history": 1.0},
}
"""The issue's floors for the default strategy fed turn by turn at 20% / 7%."""
ROLLING_STRATEGIES = ("extractive", "llm")
"""What ``--rolling`` measures unless told: masking has nothing to mask in a chat."""


@dataclass
class RollingRun:
    """Everything one ``recap eval --rolling`` measured."""

    dataset: Dataset
    trigger: float
    keep: float
    records: int
    strategies: dict[str, dict[str, Any]] = field(default_factory=dict)
    model: str = "stand-in (extractive chat model)"

    def targets(self) -> list[dict[str, Any]]:
        """The floors for the default strategy, each with its value and whether it is met."""
        row = self.strategies.get("extractive")
        if row is None or (self.trigger, self.keep) != (0.2, 0.07):
            return []
        return [
            {"figure": k, "floor": floor, "value": float(row[k]), "met": row[k] >= floor}
            for k, floor in ROLLING_TARGETS.get(self.dataset, {}).items()
        ]

    def as_dict(self) -> dict[str, Any]:
        """The run as plain data (what ``--out`` writes)."""
        return {
            "dataset": self.dataset,
            "rolling": True,
            "trigger": self.trigger,
            "keep": self.keep,
            "records": self.records,
            "model": self.model,
            "strategies": self.strategies,
            "targets": self.targets(),
        }


def run_rolling(
    dataset: Dataset,
    records: Sequence[Any],
    strategies: Sequence[str],
    *,
    trigger: float = rolling.DEFAULT_TRIGGER,
    keep: float = rolling.DEFAULT_KEEP,
    model: ChatModel | None = None,
    advance: Callable[[], None] = lambda: None,
    through_service: bool = False,
) -> RollingRun:
    """Each conversation fed one message per turn with each strategy: LoCoMo's
    conversations, or τ-bench's trajectories as one long agent session with planted
    facts (:mod:`recap_memory.eval.agent_session`). A strategy that re-reads the raw
    record is measured again with the full log handed over each turn (as the service
    always has it)."""
    if dataset not in ROLLING_TARGETS:
        raise ConfigurationError(
            f"--rolling feeds long conversations turn by turn: give the LoCoMo or the τ-bench "
            f"file (this is {dataset})"
        )
    result = RollingRun(dataset, trigger, keep, len(records))
    if model is not None:
        result.model = model.name
    for strategy in strategies:
        summarizer = summarizer_for(strategy, model)
        for with_record in (False, True) if summarizer.reads_record else (False,):
            name = f"{strategy}, full log at hand" if with_record else strategy
            if dataset == "locomo":
                score = rolling.evaluate_locomo(
                    records, summarizer, trigger, keep, advance, with_record=with_record
                )
                result.strategies[name] = score.as_dict()
            else:
                outcome = agent_session.evaluate_session(
                    records, summarizer, trigger, keep, with_record=with_record
                )
                result.strategies[name] = outcome.as_dict()
                advance()
    if through_service:
        if dataset != "locomo":
            raise ConfigurationError("--through-service feeds the LoCoMo conversations")
        from recap_memory.eval import through_service as service

        score = service.evaluate_locomo(records, trigger, keep, advance)
        result.strategies[SERVICE_ROW] = score.as_dict()
    return result


SERVICE_ROW = "service: extractive, HTTP appends, background worker"


def rolling_units(
    dataset: Dataset, records: int, strategies: Sequence[str], through_service: bool = False
) -> int:
    """How many units a rolling run advances (for a progress bar)."""
    rows = sum(2 if summarizer_reads_record(s) else 1 for s in strategies) + through_service
    return rows * (records if dataset == "locomo" else 1)


def summarizer_reads_record(strategy: str) -> bool:
    """Whether the strategy re-reads the raw record (it gets a full-log row too)."""
    return strategy == "extractive"


def units(dataset: Dataset, records: int, strategies: Sequence[str], curve: bool) -> int:
    """How many record evaluations a run makes (for a progress bar)."""
    usable = [s for s in strategies if not (dataset == "dialogsum" and s == "mask")]
    return records * len(usable) * (1 + (len(CURVE_BUDGETS) if curve else 0))


def measure(
    dataset: Dataset,
    records: Sequence[Any],
    strategy: str,
    budget: float,
    keep_share: float,
    model: ChatModel | None,
    advance: Callable[[], None] = lambda: None,
) -> dict[str, Any] | None:
    """One strategy's figures at one budget (None where the strategy has no row)."""
    summarizer = summarizer_for(strategy, model)
    if dataset == "dialogsum":
        if strategy == "mask":
            return None  # masking writes no summary to score
        return dialogsum.evaluate(records, summarizer, budget, advance).as_dict()
    compactor = strategy_compactor(summarizer)
    if dataset == "locomo":
        return locomo.evaluate(records, compactor, budget, keep_share, advance).as_dict()
    return taubench.evaluate(records, compactor, budget, keep_share, advance).as_dict()


def references(dataset: Dataset, records: Sequence[Any], budget: float) -> dict[str, Any]:
    """The data set's reference rows at ``budget``."""
    if dataset == "locomo":
        return {k: v.as_dict() for k, v in locomo.references(records, budget).items()}
    if dataset == "taubench":
        return {k: v.as_dict() for k, v in taubench.references(records, budget).items()}
    return {f"lead {budget:.0%}": dialogsum.lead(records, budget).as_dict()}


def run(
    dataset: Dataset,
    records: Sequence[Any],
    strategies: Sequence[str],
    *,
    budget: float | None = None,
    keep_share: float = 0.5,
    curve: bool = True,
    model: ChatModel | None = None,
    advance: Callable[[], None] = lambda: None,
) -> Run:
    """Every strategy at ``budget`` (the data set's default when None), the references,
    and with ``curve`` the headline figure at each of :data:`CURVE_BUDGETS`."""
    budget = budget if budget is not None else DEFAULT_BUDGET[dataset]
    result = Run(dataset, budget, keep_share, len(records))
    if model is not None:
        result.model = model.name
    result.references = references(dataset, records, budget)
    for strategy in strategies:
        rows: dict[float, dict[str, Any]] = {}
        for b in (budget, *(CURVE_BUDGETS if curve else ())):
            if b not in rows:  # the main budget is usually one of the curve's
                rows[b] = measure(dataset, records, strategy, b, keep_share, model, advance) or {}
            else:
                for _ in records:  # keep the progress bar's count
                    advance()
        if not rows[budget]:
            continue  # the strategy has no row on this data set
        result.strategies[strategy] = rows[budget]
        if curve:
            result.curve[strategy] = [
                {"budget": b, "size": rows[b]["size"], result.headline: rows[b][result.headline]}
                for b in CURVE_BUDGETS
            ]
    return result
