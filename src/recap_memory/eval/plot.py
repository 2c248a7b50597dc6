"""The retention-vs-budget curve of a run, as a PNG (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recap_memory.eval.runner import Run

LABELS = {
    "token_recall": "answer token recall",
    "id_value_recall": "ID/value recall",
    "rougeL": "ROUGE-L F1",
}


def plot_curve(run: Run, path: Path) -> None:
    """Draw each strategy's headline figure against the budget, with the whole
    conversation's figure as a dashed line, and save it to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for strategy, points in run.curve.items():
        axes.plot(
            [p["budget"] * 100 for p in points],
            [p[run.headline] for p in points],
            marker="o",
            label=strategy,
        )
    whole = _whole(run.references, run.headline)
    if whole is not None:
        axes.axhline(whole, linestyle="--", color="grey", label="whole conversation")
    axes.set_xlabel("budget (% of the conversation's characters)")
    axes.set_ylabel(LABELS.get(run.headline, run.headline))
    axes.set_title(f"recap eval {run.dataset}: retention vs budget ({run.records} records)")
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _whole(references: dict[str, Any], headline: str) -> float | None:
    for name, row in references.items():
        if name.startswith("whole") and headline in row:
            return float(row[headline])
    return None
