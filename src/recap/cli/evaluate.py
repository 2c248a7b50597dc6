"""``recap eval``: answer retention of a strategy on an evaluation data set."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from recap.cli.errors import describe, fail
from recap.errors import RecapError
from recap.eval import locomo
from recap.inputs import read_text
from recap.summarizers import STRATEGIES, make_summarizer

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def evaluate(
    dataset: Annotated[str, typer.Argument(help="Path to a LoCoMo JSON file")],
    strategy: Annotated[str, typer.Option(help=f"One of: {', '.join(STRATEGIES)}")] = "extractive",
    keep: Annotated[float, typer.Option(help="Recent turns kept, as a share of chars")] = 0.1,
    summary_max: Annotated[float, typer.Option(help="Summary cap, as a share of chars")] = 0.1,
    out: Annotated[str | None, typer.Option(help="Write the figures as JSON here")] = None,
) -> None:
    """Compact each conversation once and measure how many answers the context keeps."""
    if not (0 < keep < 1 and 0 < summary_max < 1):
        fail("--keep and --summary-max are shares of the conversation, between 0 and 1")
    try:
        data = json.loads(read_text(dataset))
        if not locomo.looks_like_locomo(data):
            fail(f"{dataset}: not a LoCoMo file (a list of objects with conversation and qa)")
        score = locomo.evaluate(data, make_summarizer(strategy), keep=keep, summary_max=summary_max)
    except (RecapError, ValueError) as exc:
        fail(describe(exc))
    title = f"LoCoMo retention, {strategy}, keep {keep:.0%} + summary {summary_max:.0%}"
    table = Table(title=title)
    for column in ("questions", "size", "exact", "token_recall"):
        table.add_column(column, justify="right")
    table.add_column("rows")
    table.add_row(
        str(score.questions), f"{score.size:.3f}", f"{score.exact:.3f}",
        f"{score.token_recall:.3f}", "all",
    )  # fmt: skip
    for category, (exact, recall, n) in score.by_category.items():
        table.add_row(str(n), "", f"{exact:.3f}", f"{recall:.3f}", CATEGORIES.get(category, "?"))
    Console().print(table)
    if out:
        figures = {
            "dataset": "locomo",
            "strategy": strategy,
            "keep": keep,
            "summary_max": summary_max,
            "size": score.size,
            "exact": score.exact,
            "token_recall": score.token_recall,
            "questions": score.questions,
            "by_category": {
                CATEGORIES.get(c, str(c)): {"exact": e, "token_recall": r, "questions": n}
                for c, (e, r, n) in score.by_category.items()
            },
        }
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)
