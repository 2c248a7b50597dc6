"""``recap eval``: how much each strategy keeps on an evaluation data set."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from recap_memory.cli import logs
from recap_memory.cli.errors import describe, fail
from recap_memory.cli.output import report_console
from recap_memory.errors import RecapError
from recap_memory.eval import runner
from recap_memory.inputs import read_text
from recap_memory.llm.spec import make_model
from recap_memory.settings import LLMSettings, load_settings
from recap_memory.summarizers import STRATEGIES

_SKIP = {"questions", "trajectories", "with_values", "dialogues", "records"}


def evaluate(
    dataset: Annotated[
        str, typer.Argument(help="A LoCoMo, τ-bench or DialogSum file (recognized by content)")
    ],
    strategy: Annotated[
        list[str] | None,
        typer.Option(help=f"Repeat for several; default all: {', '.join(STRATEGIES)}"),
    ] = None,
    budget: Annotated[
        float | None,
        typer.Option(help="Context budget as a share of the conversation (LoCoMo 0.2, τ 0.3)"),
    ] = None,
    keep_share: Annotated[
        float, typer.Option(help="Share of the budget for recent turns kept verbatim")
    ] = 0.5,
    curve: Annotated[
        bool, typer.Option(help="Also measure every strategy at 10%…50% budget")
    ] = True,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Evaluate only the first N records")
    ] = None,
    llm: Annotated[
        str | None,
        typer.Option(help="Model for the llm and hybrid rows (default: an offline stand-in)"),
    ] = None,
    llm_url: Annotated[str | None, typer.Option(help="Base URL of that model's server")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the figures as JSON here")] = None,
    plot: Annotated[
        Path | None, typer.Option(help="Draw the retention-vs-budget curve as a PNG here")
    ] = None,
    rolling: Annotated[
        bool,
        typer.Option(
            help="Feed each conversation one message per turn through the library, "
            "compacting whenever due (LoCoMo; τ-bench as one long agent session)"
        ),
    ] = False,
    trigger: Annotated[
        float, typer.Option(help="With --rolling: the trigger, a share of the conversation")
    ] = 0.2,
    keep: Annotated[
        float, typer.Option(help="With --rolling: the keep budget, a share of the conversation")
    ] = 0.07,
    through_service: Annotated[
        bool,
        typer.Option(
            help="With --rolling: also feed each conversation to the memory service over "
            "HTTP, its background worker compacting (needs the [server] extra)"
        ),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Log every pass (and every skipped one)")
    ] = False,
) -> None:
    """Compact each conversation to a budget with every strategy; measure what is kept.

    A record a strategy could not compact counts with its whole context (see the
    not_compacted column); its reasons are logged with --verbose.
    """
    logs.configure(verbose, quiet=logging.ERROR)
    strategies = strategy or list(runner.ROLLING_STRATEGIES if rolling else STRATEGIES)
    if rolling and not 0 < keep < trigger < 1:
        fail("--keep and --trigger are shares of the conversation: 0 < keep < trigger < 1")
    if budget is not None and not 0 < budget < 1:
        fail("--budget is a share of the conversation, between 0 and 1 (e.g. 0.2)")
    if not 0 < keep_share < 1:
        fail("--keep-share is a share of the budget, between 0 and 1 (e.g. 0.5)")
    if plot is not None and not curve:
        fail("--plot draws the curve: leave out --no-curve")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        fail(f"unknown strategy {unknown[0]!r}; choose from {', '.join(STRATEGIES)}")
    given: dict[str, Any] = {"llm": llm, "url": llm_url}
    try:
        settings = load_settings(
            LLMSettings,
            {k: v for k, v in given.items() if v is not None},
            options={"url": "--llm-url"},
        )
        model = make_model(settings) if llm else None
        name, records = runner.load(dataset, read_text(dataset))
    except (RecapError, ValidationError) as exc:
        fail(describe(exc))
    records = records[:limit] if limit else records
    if rolling:
        _evaluate_rolling(name, records, strategies, trigger, keep, model, out, through_service)
        return
    try:
        with _progress() as progress:
            task = progress.add_task(
                f"evaluating {name}", total=runner.units(name, len(records), strategies, curve)
            )
            result = runner.run(
                name, records, strategies, budget=budget, keep_share=keep_share, curve=curve,
                model=model, advance=lambda: progress.advance(task),
            )  # fmt: skip
    except RecapError as exc:
        fail(describe(exc))
    show(result, report_console())
    if out:
        out.write_text(json.dumps(result.as_dict(), indent=2) + "\n", encoding="utf-8")
    if plot:
        from recap_memory.eval.plot import plot_curve

        plot_curve(result, plot)


def _progress() -> Progress:
    """A progress bar on stderr that goes away when done."""
    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    )  # fmt: skip
    return Progress(*columns, console=Console(stderr=True), transient=True)


def _evaluate_rolling(
    name: runner.Dataset,
    records: list[Any],
    strategies: list[str],
    trigger: float,
    keep: float,
    model: Any,
    out: Path | None,
    through_service: bool,
) -> None:
    try:
        with _progress() as progress:
            task = progress.add_task(
                f"feeding {name} turn by turn",
                total=runner.rolling_units(name, len(records), strategies, through_service),
            )
            result = runner.run_rolling(
                name, records, strategies, trigger=trigger, keep=keep, model=model,
                advance=lambda: progress.advance(task), through_service=through_service,
            )  # fmt: skip
    except RecapError as exc:
        fail(describe(exc))
    show_rolling(result, report_console())
    if out:
        out.write_text(json.dumps(result.as_dict(), indent=2) + "\n", encoding="utf-8")


ROLLING_COLUMNS: dict[str, tuple[str, ...]] = {
    "locomo": (
        "size", "token_recall", "exact", "early_token_recall", "readable", "passes",
        "worst_context_over_trigger", "call_ms",
    ),
    "taubench": (
        "user_turns", "facts_found", "facts", "valid_history", "size", "readable", "passes",
        "worst_context_over_trigger", "call_ms",
    ),
}  # fmt: skip


def show_rolling(result: runner.RollingRun, console: Console) -> None:
    """Print a rolling run: each strategy, the newest-messages floor, the targets."""
    table = Table(
        title=f"recap eval {result.dataset} --rolling: {_what_rolled(result)}, one message a "
        f"turn, trigger {result.trigger:.0%}, keep {result.keep:.0%}, model: {result.model}"
    )
    columns = ROLLING_COLUMNS[result.dataset]
    table.add_column("row")
    for column in columns:
        table.add_column(column.replace("_", " "), justify="right")
    for strategy, row in result.strategies.items():
        table.add_row(strategy, *(_cell(row.get(c)) for c in columns))
    floor = next(iter(result.strategies.values())).get("floor")
    if floor:
        table.add_row("ref: newest messages, same size", *(_cell(floor.get(c)) for c in columns))
    console.print(table)
    for strategy, row in result.strategies.items():
        lost = [fact for fact, found in row.get("found", {}).items() if not found]
        if lost:
            console.print(f"{strategy}: lost {', '.join(lost)}")
    for target in result.targets():
        verdict = "MET" if target["met"] else "MISSED"
        console.print(
            f"target: rolling {target['figure']} ≥ {target['floor']:.2f}: "
            f"{target['value']:.3f} {verdict}"
        )


def _what_rolled(result: runner.RollingRun) -> str:
    if result.dataset == "taubench":
        return f"one long agent session built from {result.records} trajectories"
    return f"{result.records} conversations"


def show(result: runner.Run, console: Console) -> None:
    """Print the run: strategies and references, per-category rows, curve, target."""
    rows = {**result.strategies, **{f"ref: {k}": v for k, v in result.references.items()}}
    figures = [k for k, v in next(iter(rows.values())).items() if _is_figure(k, v)]
    keep = f" (keep {result.keep_share:.0%} of it)" if result.dataset != "dialogsum" else ""
    table = Table(
        title=f"recap eval {result.dataset}: {result.records} records, budget "
        f"{result.budget:.0%}{keep}, model: {result.model}"
    )
    table.add_column("row")
    for figure in figures:
        table.add_column(figure, justify="right")
    for row, values in rows.items():
        table.add_row(row, *(_cell(values.get(f)) for f in figures))
    console.print(table)
    for group in ("by_category", "by_evidence"):
        _breakdown(result, group, console)
    if result.curve:
        curve = Table(title=f"{result.headline} vs budget")
        curve.add_column("strategy")
        budgets = [p["budget"] for p in next(iter(result.curve.values()))]
        for b in budgets:
            curve.add_column(f"{b:.0%}", justify="right")
        for strategy, points in result.curve.items():
            curve.add_row(strategy, *(_cell(p[result.headline]) for p in points))
        console.print(curve)
    target = result.target()
    if target:
        verdict = "MET" if target["met"] else "MISSED"
        console.print(
            f"target: {target['what']} ≥ {target['floor']:.2f}: {target['value']:.3f} {verdict}"
        )


def _breakdown(result: runner.Run, group: str, console: Console) -> None:
    rows = {k: v[group] for k, v in result.strategies.items() if group in v}
    if not rows:
        return
    parts = sorted({p for v in rows.values() for p in v})
    table = Table(title=f"{result.headline} {group.replace('_', ' ')} (questions)")
    table.add_column("strategy")
    for part in parts:
        table.add_column(part, justify="right")
    for strategy, values in rows.items():
        table.add_row(
            strategy,
            *(
                f"{values[p]['token_recall']:.3f} ({values[p]['questions']})" if p in values else ""
                for p in parts
            ),
        )
    console.print(table)


def _is_figure(key: str, value: Any) -> bool:
    return isinstance(value, int | float) and key not in _SKIP


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)
