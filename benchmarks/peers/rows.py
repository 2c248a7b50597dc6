"""The compared figures: one row per figure, each engine's value and recap ÷ each peer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from benchmarks.peers.checks import RECAP_PATHS, CheckCost
from benchmarks.peers.engines import ENGINES, READS_ALL
from benchmarks.peers.recall import Recall
from benchmarks.peers.sessions import Session
from benchmarks.peers.validity import Validity

Better = Literal["higher", "lower"]


@dataclass(frozen=True)
class Row:
    """One compared figure: each engine's value and recap ÷ each peer."""

    name: str
    unit: str
    better: Better
    values: dict[str, float]
    strict: bool = False
    """The target is strictly better than each peer (else at least equal)."""

    def ratio(self, peer: str) -> float | None:
        """recap ÷ ``peer`` (None when the peer's figure is 0)."""
        base = self.values[peer]
        return self.values["recap"] / base if base else None

    def met(self, peer: str) -> bool:
        """Whether recap meets the target against ``peer``."""
        mine, theirs = self.values["recap"], self.values[peer]
        if self.better == "lower":
            mine, theirs = -mine, -theirs
        return mine > theirs if self.strict else mine >= theirs

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON-able data, ratios and targets included."""
        peers = [e for e in ENGINES if e != "recap"]
        return {
            **asdict(self),
            "ratios": {p: self.ratio(p) for p in peers},
            "met": {p: self.met(p) for p in peers},
        }


def attribute_row(
    name: str,
    unit: str,
    better: Better,
    figures: Mapping[str, object],
    attr: str,
    strict: bool = False,
) -> Row:
    """A row of one attribute of each engine's figures."""
    return Row(name, unit, better, {e: float(getattr(f, attr)) for e, f in figures.items()}, strict)


def compared_rows(
    taubench: Mapping[str, Validity],
    parallel: Mapping[str, Validity],
    recall: Mapping[str, Recall],
    locomo_fraction: float,
    sessions: Mapping[str, Session],
    checks: Sequence[CheckCost],
) -> list[Row]:
    """Every row of ``python -m benchmarks peers``, in the order the table shows them."""
    rows = [
        attribute_row("valid histories, τ-bench", "rate", "higher", taubench, "rate",
                      strict=True),
        attribute_row("valid histories, parallel calls", "rate", "higher", parallel, "rate",
                      strict=True),
        attribute_row(f"LoCoMo token recall at {locomo_fraction:.0%}", "recall", "higher",
                      {e: recall[e] for e in ENGINES}, "token_recall"),
        Row("  … each peer reading all it folds", "recall", "higher",
            {e: recall[READS_ALL.get(e, e)].token_recall for e in ENGINES}),
        *(row for c in checks for row in _check_rows(c)),
        attribute_row("LoCoMo rolling recall, whole convs", "recall", "higher",
                      {e: sessions[e] for e in ENGINES}, "token_recall"),
        Row("  … each peer reading all it folds, rolling", "recall", "higher",
            {e: sessions[READS_ALL.get(e, e)].token_recall for e in ENGINES}),
        attribute_row("summarizer input, whole convs", "tokens", "lower",
                      {e: sessions[e] for e in ENGINES}, "input_tokens"),
    ]  # fmt: skip
    if len(checks) > 1:
        first, last = checks[0], checks[-1]
        name = f"per-turn growth, {_short(last.messages)}÷{_short(first.messages)}"
        growth = {e: last.seconds[e] / first.seconds[e] for e in first.seconds}
        rows.extend(_with_recap_paths(name, "×", growth))
    return rows


def _check_rows(check: CheckCost) -> list[Row]:
    """The per-turn call at one size: recap's list path, then its other paths."""
    micros = {e: s * 1e6 for e, s in check.seconds.items()}
    return _with_recap_paths(f"per-turn call, {check.messages:,} msgs", "µs", micros)


def _with_recap_paths(name: str, unit: str, values: Mapping[str, float]) -> list[Row]:
    """A lower-is-better row for recap's list path, and one for each of its other paths
    (``name · path``, the same peers' figures beside each)."""
    peers = {e: values[e] for e in ENGINES}
    return [
        Row(name, unit, "lower", peers),
        *(Row(f"{name} · {path}", unit, "lower", {**peers, "recap": values[path]})
          for path in RECAP_PATHS if path in values),
    ]  # fmt: skip


def _short(count: int) -> str:
    """``100000`` as ``100k``."""
    return f"{count // 1000}k" if count >= 1000 and count % 1000 == 0 else str(count)
