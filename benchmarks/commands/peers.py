"""``python -m benchmarks peers``: recap beside LangChain's SummarizationMiddleware and LangMem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from recap_memory.cli.errors import fail
from recap_memory.cli.output import report_console
from recap_memory.eval.locomo import looks_like_locomo
from recap_memory.eval.taubench import looks_like_taubench

if TYPE_CHECKING:
    from benchmarks.peers import PeersFigures, Session  # needs langchain, langmem

PEER_ENGINES = ("recap", "langchain", "langmem")
"""The columns of the peers' tables (``benchmarks.peers.engines.ENGINES``, which needs
langchain to import)."""
PEERS = PEER_ENGINES[1:]
"""The engines recap is set against."""


def peers(
    data_dir: Annotated[
        Path,
        typer.Option(
            envvar="RECAP_DATA_DIR",
            help="Folder with locomo_dev.json and taubench_airline_dev.json",
        ),
    ] = Path("../shared/data"),
    locomo_samples: Annotated[int, typer.Option(min=1, help="LoCoMo conversations")] = 5,
    tau_records: Annotated[int, typer.Option(min=1, help="τ-bench trajectories")] = 100,
    generated: Annotated[
        int, typer.Option(min=1, help="Generated sessions with parallel calls at the cut")
    ] = 50,
    session_samples: Annotated[
        int, typer.Option(min=1, help="LoCoMo conversations fed whole, one message per turn")
    ] = 5,
    check_sizes: Annotated[
        str, typer.Option(help="History sizes for the trigger check (the first is the baseline)")
    ] = "10,1000,100000",
    check_samples: Annotated[int, typer.Option(min=1, help="Timed samples per size")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the generated sessions")] = 0,
    out: Annotated[Path | None, typer.Option(help="Write the figures as JSON here")] = None,
) -> None:
    """recap beside LangChain's SummarizationMiddleware and LangMem, same model, same budget."""
    try:
        from benchmarks import peers as prs
    except ImportError as exc:
        fail(f"the peers benchmark needs langchain and langmem (pip install -e '.[dev]'): {exc}")
    try:
        sizes = tuple(int(part) for part in check_sizes.split(","))
    except ValueError:
        fail(f"--check-sizes: expected integers such as 10,1000,100000, got {check_sizes!r}")
    if any(s < 1 for s in sizes):
        fail("--check-sizes: sizes must be positive")
    data = {}
    shapes = {
        "locomo_dev.json": looks_like_locomo,
        "taubench_airline_dev.json": looks_like_taubench,
    }
    for name, looks_right in shapes.items():
        path = data_dir / name
        if not path.exists():
            fail(f"{path} is missing; pass --data-dir (or set RECAP_DATA_DIR)")
        try:
            data[name] = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as exc:
            fail(f"{path}: cannot read it as JSON ({exc}); is it the evaluation data file?")
        if not looks_right(data[name]):
            fail(f"{path}: not the {name.split('_')[0]} data (a non-empty list of its records)")
    options = prs.Options(
        locomo_samples=locomo_samples,
        tau_records=tau_records,
        generated=generated,
        session_samples=min(session_samples, locomo_samples),
        check_sizes=sizes,
        check_samples=check_samples,
        seed=seed,
    )
    figures = prs.run(data["locomo_dev.json"], data["taubench_airline_dev.json"], options)
    console = report_console()
    console.print(peers_table(figures))
    console.print(peers_details(figures))
    for label, validity in (("τ-bench", figures.taubench), ("parallel", figures.parallel)):
        for name, v in validity.items():
            if v.first_problem:
                console.print(f"{name}, {label}: {v.first_problem}", markup=False, highlight=False)
    for note in figures.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    if out:
        out.write_text(json.dumps(figures.as_dict(), indent=2) + "\n", encoding="utf-8")


def peers_table(figures: PeersFigures) -> Table:
    """Each row: the three engines' figures and recap ÷ each peer (green: target met)."""
    table = Table(
        title="recap vs LangChain SummarizationMiddleware vs LangMem",
        caption=f"one run, {figures.elapsed_s:.0f} s; same model and budget for all three. "
        "↑ higher / ↓ lower is better; target: recap at least equal on every row, "
        "strictly better on rows marked >",
    )
    table.add_column("figure")
    for column in (*PEER_ENGINES, *(f"÷ {peer}" for peer in PEERS)):
        table.add_column(column, justify="right")
    for row in figures.rows:
        ratios = []
        for peer in PEERS:
            ratio = row.ratio(peer)
            text = "∞" if ratio is None else _ratio(ratio)
            ratios.append(f"[{'green' if row.met(peer) else 'red'}]{text}[/]")
        values = [_figure(row.values[e], row.unit) for e in PEER_ENGINES]
        mark = ("↑" if row.better == "higher" else "↓") + (" >" if row.strict else "")
        table.add_row(f"{row.name} ({row.unit}) {mark}", *values, *ratios)
    return table


def peers_details(figures: PeersFigures) -> Table:
    """What explains the rows: compactions done, model calls, sizes, what was read."""
    table = Table(title="Details")
    table.add_column("figure")
    for column in PEER_ENGINES:
        table.add_column(column, justify="right")
    engines = PEER_ENGINES
    tau, par, loc, ses = figures.taubench, figures.parallel, figures.locomo, figures.sessions
    lines: list[tuple[str, list[str]]] = [
        ("τ-bench compacted", [f"{tau[e].compacted}/{tau[e].histories}" for e in engines]),
        ("parallel compacted", [f"{par[e].compacted}/{par[e].histories}" for e in engines]),
        ("LoCoMo context size (÷ whole)", [f"{loc[e].size:.3f}" for e in engines]),
        ("LoCoMo exact answers", [f"{loc[e].exact:.3f}" for e in engines]),
        ("LoCoMo ≈ share of folded text read", [f"{loc[e].read_share:.2f}" for e in engines]),
        ("model calls, whole conversations", [str(ses[e].model_calls) for e in engines]),
        ("folds, whole conversations", [str(ses[e].folds) for e in engines]),
        ("summarizer input tokens per call", [_per_call(ses[e]) for e in engines]),
        ("mean context tokens per turn", [f"{ses[e].mean_context_tokens:,.0f}" for e in engines]),
    ]  # fmt: skip
    for name, cells in lines:
        table.add_row(name, *cells)
    return table


def _ratio(ratio: float) -> str:
    return f"{ratio:.2f}" if 0.01 <= ratio < 1000 else f"{ratio:.2g}"


def _per_call(session: Session) -> str:
    calls = session.model_calls
    return f"{session.input_tokens / calls:,.0f}" if calls else "-"


def _figure(value: float, unit: str) -> str:
    if unit in ("rate", "recall"):
        return f"{value:.3f}"
    if unit == "×":
        return f"{value:,.1f}"
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"
