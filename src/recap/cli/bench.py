"""``recap bench``: benchmarks whose figures are ratios to a baseline of the same run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import httpx
import typer
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError

from recap.bench import engine as eng
from recap.bench import reliability as rel
from recap.bench.service import GATE_TARGET, Options, ServiceFigures, run
from recap.cli.errors import describe, fail
from recap.cli.output import report_console
from recap.errors import RecapError
from recap.eval.locomo import looks_like_locomo
from recap.eval.taubench import looks_like_taubench

if TYPE_CHECKING:
    from recap.bench.peers import PeersFigures, Session  # needs langchain, langmem

app = typer.Typer(
    name="bench",
    help="Measure recap against baselines taken in the same run (ratios, not timings).",
    no_args_is_help=True,
)


@app.command("service")
def service(
    database_url: Annotated[
        str | None,
        typer.Option(help="Database to measure on (default: a SQLite file in a temporary folder)"),
    ] = None,
    large: Annotated[
        int, typer.Option(min=2, help="Messages in the large session")
    ] = Options.large,
    small: Annotated[
        int, typer.Option(min=1, help="Messages in the small session")
    ] = Options.small,
    samples: Annotated[
        int, typer.Option(min=1, help="Timed appends per session")
    ] = Options.samples,
    clients: Annotated[int, typer.Option(min=1, help="Concurrent HTTP clients")] = Options.clients,
    requests: Annotated[
        int, typer.Option(min=1, help="HTTP requests per endpoint and round")
    ] = Options.requests,
    rounds: Annotated[
        int, typer.Option(min=2, help="Alternating no-op / append rounds")
    ] = Options.rounds,
    out: Annotated[Path | None, typer.Option(help="Write the figures as JSON here")] = None,
) -> None:
    """The gate's cost in a large vs a small session, and HTTP append vs no-op throughput."""
    if small >= large:
        fail("--small must be below --large")
    options = Options(large, small, samples, clients, requests, rounds)
    try:
        figures = run(options, database_url)
    except (RecapError, SQLAlchemyError, httpx.HTTPError, OSError) as exc:
        fail(describe(exc))
    console = report_console()
    console.print(gate_table(figures))
    console.print(http_table(figures))
    if out:
        out.write_text(json.dumps(figures.as_dict(), indent=2) + "\n", encoding="utf-8")


def gate_table(figures: ServiceFigures) -> Table:
    """Append-and-gate in each session, with the ratio against the target."""
    gate = figures.gate
    table = Table(
        title=f"Gate cost: one Store.append, due-or-not decided ({figures.database})",
        caption=f"large ÷ small (medians) {gate.ratio:.2f}, target < {GATE_TARGET}: "
        + ("PASS" if gate.passed else "MISS"),
    )
    table.add_column("session")
    for column in ("messages", "samples", "median ms", "p90 ms"):
        table.add_column(column, justify="right")
    for name, count, spread in (
        ("small", gate.small_messages, gate.small),
        ("large", gate.large_messages, gate.large),
    ):
        table.add_row(
            name,
            f"{count:,}",
            str(spread.samples),
            f"{spread.median_ms:.3f}",
            f"{spread.p90_ms:.3f}",
        )
    return table


def http_table(figures: ServiceFigures) -> Table:
    """Throughput and latency of each endpoint in the median round."""
    median, options = figures.http, figures.options
    ratios = ", ".join(f"{r.ratio:.2f}" for r in figures.rounds)
    table = Table(
        title=f"HTTP, {options.clients} clients × {options.requests:,} requests, "
        f"median of {len(figures.rounds)} rounds ({figures.database})",
        caption=f"append ÷ no-op throughput {median.ratio:.2f} (rounds: {ratios})",
    )
    table.add_column("endpoint")
    for column in ("requests/s", "p50 ms", "p99 ms"):
        table.add_column(column, justify="right")
    for name, phase in (
        ("GET /healthz (no-op)", median.noop),
        ("POST /sessions/{id}/messages", median.append),
    ):
        table.add_row(
            name,
            f"{phase.per_second:,.0f}",
            f"{phase.latency.median_ms:.2f}",
            f"{phase.latency.p99_ms:.2f}",
        )
    return table


@app.command("reliability")
def reliability(
    short: Annotated[bool, typer.Option(help="The small run the test suite uses")] = False,
    admin_url: Annotated[
        str, typer.Option(help="PostgreSQL to create the run's database in")
    ] = rel.Options.admin_url,
    clients: Annotated[int | None, typer.Option(min=1, help="Concurrent clients")] = None,
    sessions: Annotated[int | None, typer.Option(min=1, help="Sessions appended to")] = None,
    requests: Annotated[int | None, typer.Option(min=1, help="Append requests in all")] = None,
    restart_postgres: Annotated[
        bool, typer.Option(help="Restart PostgreSQL once under load (needs pg_ctlcluster)")
    ] = True,
    out: Annotated[Path | None, typer.Option(help="Write the figures as JSON here")] = None,
) -> None:
    """2 servers and 3 workers on one PostgreSQL under load and faults: nothing lost."""
    changes: dict[str, Any] = {
        k: v
        for k, v in {"clients": clients, "sessions": sessions, "requests": requests}.items()
        if v is not None
    }
    base = rel.Options.short if short else rel.Options
    options = base(admin_url=admin_url, restart_postgres=restart_postgres, **changes)
    try:
        figures = asyncio.run(rel.run(options, fuzz=rel.fuzz_bad_inputs))
    except (RecapError, SQLAlchemyError, httpx.HTTPError, OSError, RuntimeError) as exc:
        fail(describe(exc))
    console = report_console()
    console.print(reliability_table(figures))
    for check in figures.checks:
        mark = "[green]✓[/]" if check.passed else "[red]✗[/]"
        console.print(f"{mark} {check.name} ({check.detail})")
    for failure in figures.bad_input_failures:
        console.print(f"[red]bad input failure:[/] {failure}", markup=True, highlight=False)
    if out:
        out.write_text(json.dumps(figures.as_dict(), indent=2) + "\n", encoding="utf-8")
    if not figures.ok:
        raise typer.Exit(1)


def reliability_table(figures: rel.Figures) -> Table:
    """Requests, faults and bad inputs: what was sent, what survived, what must be 0."""
    table = Table(
        title="Reliability: 2 servers, 3 workers, one PostgreSQL, under faults",
        caption=f"{figures.throughput:.0f} acknowledged appends/s, p50 {figures.p50_ms:.0f} ms, "
        f"p99 {figures.p99_ms:.0f} ms; {figures.compactions} compactions",
    )
    table.add_column("what")
    for column in ("count", "of which", "must be"):
        table.add_column(column, justify="right")
    table.add_row(
        "requests sent / acknowledged / lost",
        str(figures.sent),
        f"{figures.acknowledged} / {figures.lost}",
        "lost 0",
    )
    injected = [f for f in figures.faults if f.injected]
    survived = sum(f.survived for f in injected)
    table.add_row("faults injected / survived", str(len(injected)), str(survived), "all")
    table.add_row(
        "bad inputs tried / 5xx",
        str(figures.bad_inputs_tried),
        str(figures.bad_input_5xx),
        "5xx 0",
    )
    for fault in figures.faults:
        state = (
            "survived" if fault.survived else "NOT survived" if fault.injected else "not injected"
        )
        table.add_row(f"  {fault.name}", "", state, fault.detail)
    return table


# engine -------------------------------------------------------------------------------------


def _sizes(text: str) -> tuple[int, ...]:
    """``1k,10k,100k,1M`` (or plain integers) as sizes in characters."""
    scale = {"k": 1_000, "m": 1_000_000}
    try:
        sizes = tuple(
            int(float(p[:-1]) * scale[p[-1].lower()]) if p[-1].lower() in scale else int(p)
            for p in (part.strip() for part in text.split(","))
        )
    except (ValueError, IndexError):
        fail(f"--sizes: expected sizes such as 1k,10k,100k,1M, got {text!r}")
    if len(sizes) < 2 or any(s < 100 for s in sizes) or list(sizes) != sorted(set(sizes)):
        fail("--sizes: at least two increasing sizes of 100 characters or more")
    return sizes


@app.command("engine")
def engine(
    sizes: Annotated[
        str, typer.Option(help="Conversation sizes in characters (the first is the baseline)")
    ] = "1k,10k,100k,1M",
    repeats: Annotated[
        int, typer.Option(min=1, help="Timed passes per size below 1M chars (median)")
    ] = eng.Options.repeats,
    big_repeats: Annotated[
        int, typer.Option(min=1, help="Timed passes per size from 1M chars")
    ] = eng.Options.big_repeats,
    turns: Annotated[
        int, typer.Option(min=4, help="Turns of the generated conversation fed turn by turn")
    ] = eng.Options.turns,
    trigger_chars: Annotated[
        int, typer.Option(min=2, help="Cumulative work: the trigger (scaled down for short ones)")
    ] = eng.Options.trigger_chars,
    keep_chars: Annotated[
        int, typer.Option(min=1, help="Cumulative work: the recent characters kept")
    ] = eng.Options.keep_chars,
    window: Annotated[
        int, typer.Option(min=1_024, help="The fake model's context window in tokens")
    ] = eng.Options.window,
    locomo: Annotated[
        Path | None,
        typer.Option(exists=True, dir_okay=False, help="Also feed this LoCoMo file's first one"),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the generated conversations")
    ] = eng.Options.seed,
    profile: Annotated[
        bool | None,
        typer.Option(help="Profile the two largest sizes (default: when super-linear)"),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the figures as JSON here")] = None,
) -> None:
    """Compaction time vs conversation size, and model input tokens per conversation token
    over a long conversation: recap's cumulative chain vs re-summarizing everything."""
    if keep_chars >= trigger_chars:
        fail("--keep-chars must be below --trigger-chars")
    options = eng.Options(
        _sizes(sizes), repeats, big_repeats, turns, trigger_chars, keep_chars, window, locomo,
        seed, profile,
    )  # fmt: skip
    try:
        figures = eng.run(options)
    except (RecapError, OSError, ValueError, KeyError) as exc:
        fail(describe(exc))
    console = report_console()
    console.print(scaling_table(figures.scaling))
    if figures.scaling.hotspots:
        console.print(hotspot_table(figures.scaling))
    for work in figures.cumulative:
        console.print(work_table(work))
    for row in figures.scaling.rows:
        if row.outcome != "summarized":
            console.print(f"[yellow]{row.chars:,} chars: {row.outcome}[/]", highlight=False)
    console.print(f"Verdict: {engine_verdict(figures)}", highlight=False)
    console.print(f"({figures.seconds:.0f} s)")
    if out:
        out.write_text(json.dumps(figures.as_dict(), indent=2) + "\n", encoding="utf-8")


def engine_verdict(figures: eng.EngineFigures) -> str:
    """The scaling verdict and each conversation's two ratios at its end."""
    parts = [figures.scaling.verdict]
    for work in figures.cumulative:
        final = work.final
        parts.append(
            f"{work.name}: recap {final.recap_ratio:.2f} input tokens per conversation token, "
            f"re-summarize-all {final.baseline_ratio:.2f} "
            f"(×{work.growth('baseline'):.2f} from 50% to 100%)"
        )
    return "; ".join(parts)


def scaling_table(scaling: eng.Scaling) -> Table:
    """Every size's median time, against the smallest size's."""
    base = scaling.rows[0]
    last = scaling.rows[-1].exponent
    table = Table(
        title=f"Engine: one compaction pass (extractive) vs size, baseline {base.chars:,} chars",
        caption=f"{scaling.verdict}; last step {last:.2f}" if last is not None else "",
    )
    for column in ("chars", "msgs", "reps", "median ms", "ms/1k ch", "× size", "× time"):
        table.add_column(column, justify="right")
    table.add_column("per char ×", justify="right")
    table.add_column("exp.", justify="right")
    for row in scaling.rows:
        table.add_row(
            f"{row.chars:,}",
            f"{row.messages:,}",
            str(row.repeats),
            f"{row.median_ms:,.1f}",
            f"{row.ms_per_1k_chars:.2f}",
            f"{row.size_ratio:,.1f}",
            f"{row.time_ratio:,.1f}",
            f"{row.cost_per_char_ratio:.2f}",
            "—" if row.exponent is None else f"{row.exponent:.2f}",
        )
    return table


def hotspot_table(scaling: eng.Scaling) -> Table:
    """The functions whose own time grew most beyond linear between the two largest sizes."""
    small, large = scaling.rows[-2].chars, scaling.rows[-1].chars
    table = Table(title=f"Hotspots: own time beyond linear growth, {small:,} → {large:,} chars")
    table.add_column("function (file:line) ← its main caller", overflow="fold")
    for column in ("small ms", "large ms", "exponent", "excess ms"):
        table.add_column(column, justify="right")
    for spot in scaling.hotspots:
        table.add_row(
            f"{spot.where} ← {spot.caller}" if spot.caller else spot.where,
            f"{spot.small_ms:,.1f}",
            f"{spot.large_ms:,.1f}",
            "—" if spot.exponent is None else f"{spot.exponent:.2f}",
            f"{spot.excess_ms:,.1f}",
        )
    return table


def work_table(work: eng.Cumulative) -> Table:
    """Model input tokens per conversation token at each checkpoint, for both strategies."""
    final = work.final
    table = Table(
        title=f"Summarization work, {work.name}: {work.turns:,} turns, "
        f"{work.conversation_tokens:,} tokens, trigger {work.trigger_chars:,} / keep "
        f"{work.keep_chars:,} chars",
        caption=f"input ÷ conversation tokens at the end: recap {final.recap_ratio:.2f} "
        f"(×{work.growth('recap'):.2f} from 50% to 100%), re-summarize-all "
        f"{final.baseline_ratio:.2f} (×{work.growth('baseline'):.2f}); "
        f"{work.recap_calls:,} vs {work.baseline_calls:,} model calls",
    )
    for column in ("at", "turns", "conv. tokens", "passes"):
        table.add_column(column, justify="right")
    for column in ("recap input", "÷ conv.", "re-sum. input", "÷ conv."):
        table.add_column(column, justify="right")
    for point in work.checkpoints:
        table.add_row(
            f"{point.share:.0%}",
            f"{point.turns:,}",
            _tokens(point.conversation_tokens),
            str(point.compactions),
            _tokens(point.recap_input_tokens),
            f"{point.recap_ratio:.2f}",
            _tokens(point.baseline_input_tokens),
            f"{point.baseline_ratio:.2f}",
        )
    return table


def _tokens(count: int) -> str:
    """A token count in at most 7 characters (``8.14M``, ``232.7k``, ``5,482``)."""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.2f}M"
    return f"{count / 1_000:.1f}k" if count >= 100_000 else f"{count:,}"


# peers --------------------------------------------------------------------------------------

PEER_ENGINES = ("recap", "langchain", "langmem")
"""The columns of the peers' tables (``recap.bench.peers.engines.ENGINES``, which needs
langchain to import)."""
PEERS = PEER_ENGINES[1:]
"""The engines recap is set against."""


@app.command("peers")
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
        from recap.bench import peers as prs
    except ImportError as exc:
        fail(f"recap bench peers needs langchain and langmem (pip install -e '.[dev]'): {exc}")
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
