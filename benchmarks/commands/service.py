"""``python -m benchmarks service`` and ``… reliability``: the memory service's costs, and
its behaviour under load and faults."""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError

from benchmarks import reliability as rel
from benchmarks import responsive
from benchmarks.service import GATE_TARGET, Options, ServiceFigures, run
from recap_memory.cli.errors import describe, fail
from recap_memory.cli.output import report_console
from recap_memory.errors import RecapError


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
        with tempfile.TemporaryDirectory(prefix="recap-responsive-") as folder:
            during_pass = responsive.measure(Path(folder))
    except (RecapError, SQLAlchemyError, httpx.HTTPError, OSError, TimeoutError) as exc:
        fail(describe(exc))
    console = report_console()
    console.print(gate_table(figures))
    console.print(http_table(figures))
    console.print(responsive_table(during_pass))
    if out:
        data = {**figures.as_dict(), "responsive": asdict(during_pass)}
        out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


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


def responsive_table(figures: responsive.Responsiveness) -> Table:
    """``/healthz`` idle and while a large append is compacted, side by side."""
    table = Table(
        title=f"GET /healthz while one {figures.body_bytes / 1e6:.1f} MB append is compacted "
        f"(SQLite, embedded worker)",
        caption=f"the pass folded {figures.folded_messages:,} messages in "
        f"{figures.pass_seconds:.1f} s; worst ÷ idle median "
        f"{figures.busy.max_ms / figures.idle.median_ms:.1f}",
    )
    table.add_column("server")
    for column in ("probes", "median ms", "p99 ms", "max ms"):
        table.add_column(column, justify="right")
    for name, probes in (("idle", figures.idle), ("append and pass", figures.busy)):
        table.add_row(
            name,
            str(probes.samples),
            f"{probes.median_ms:.1f}",
            f"{probes.p99_ms:.1f}",
            f"{probes.max_ms:.1f}",
        )
    return table


def reliability(
    short: Annotated[bool, typer.Option(help="The small run the test suite uses")] = False,
    database: Annotated[
        str,
        typer.Option(
            help="postgres: 2 servers and 3 workers on one PostgreSQL; sqlite: the embedded "
            "deployment, one server with its worker on a SQLite file"
        ),
    ] = "postgres",
    admin_url: Annotated[
        str,
        typer.Option(
            help="PostgreSQL to create the run's database in (with --no-restart-postgres; "
            "otherwise the run starts a private cluster of its own)"
        ),
    ] = rel.Options.admin_url,
    clients: Annotated[int | None, typer.Option(min=1, help="Concurrent clients")] = None,
    sessions: Annotated[int | None, typer.Option(min=1, help="Sessions appended to")] = None,
    requests: Annotated[int | None, typer.Option(min=1, help="Turns sent in all")] = None,
    restart_postgres: Annotated[
        bool,
        typer.Option(
            help="Run on a private PostgreSQL cluster the run starts, and restart that one "
            "under load (the machine's own cluster is never stopped; --no-restart-postgres "
            "runs on --admin-url's server and restarts nothing)"
        ),
    ] = True,
    keep: Annotated[
        bool, typer.Option(help="Keep the run's database (and logs) for inspection")
    ] = False,
    out: Annotated[Path | None, typer.Option(help="Write the figures as JSON here")] = None,
) -> None:
    """recap under load and faults, checked against what its clients were told: nothing
    acknowledged lost or doubled, nothing refused written, every context complete, no bad
    summary stored."""
    if database not in ("postgres", "sqlite"):
        fail(f"--database must be postgres or sqlite, not {database!r}")
    changes: dict[str, Any] = {
        k: v
        for k, v in {"clients": clients, "sessions": sessions, "requests": requests}.items()
        if v is not None
    }
    base = rel.Options.short if short else rel.Options
    options = base(
        database=database,  # type: ignore[arg-type]
        admin_url=admin_url,
        restart_postgres=restart_postgres,
        keep_database=keep,
        **changes,
    )
    try:
        figures = asyncio.run(rel.run(options, fuzz=rel.fuzz_bad_inputs))
    except (RecapError, SQLAlchemyError, httpx.HTTPError, OSError, RuntimeError) as exc:
        fail(describe(exc))
    console = report_console()
    console.print(reliability_table(figures))
    for check in figures.checks:
        mark = "[green]✓[/]" if check.passed else "[red]✗[/]"
        console.print(f"{mark} {check.name}: {check.detail}", highlight=False)
    for failure in figures.bad_input_failures:
        console.print(f"[red]bad input failure:[/] {failure}", markup=True, highlight=False)
    if out:
        out.write_text(json.dumps(figures.as_dict(), indent=2) + "\n", encoding="utf-8")
    if not figures.ok:
        console.print(f"[red]FAILED:[/] {'; '.join(figures.failed) or 'no checks ran'}")
        raise typer.Exit(1)


def reliability_table(figures: rel.Figures) -> Table:
    """Requests, faults and bad inputs: what was sent, what was consumed, what survived."""
    where = (
        "one PostgreSQL" if figures.database == "postgres" else "one SQLite file (embedded worker)"
    )
    table = Table(
        title=f"Reliability: {figures.servers} server(s), {figures.workers} worker(s), "
        f"{where}, under faults",
        caption=f"{figures.throughput:.0f} acknowledged requests/s, p50 {figures.p50_ms:.0f} ms, "
        f"p99 {figures.p99_ms:.0f} ms; {figures.compactions} summary rows",
    )
    table.add_column("what")
    for column in ("count", "of which", "must be"):
        table.add_column(column, justify="right")
    table.add_row(
        "requests sent / acknowledged / refused / unresolved",
        str(figures.sent),
        f"{figures.acknowledged} / {figures.refused} / {figures.unresolved}",
        "unresolved 0",
    )
    injected = [f for f in figures.faults if f.injected]
    survived = sum(f.survived for f in injected)
    table.add_row("fault kinds consumed / survived", str(len(injected)), str(survived), "all")
    table.add_row(
        "bad inputs tried / 5xx",
        str(figures.bad_inputs_tried),
        str(figures.bad_input_5xx),
        "5xx 0",
    )
    for fault in figures.faults:
        state = (
            "survived" if fault.survived else "NOT survived" if fault.injected else "not consumed"
        )
        table.add_row(f"  {fault.name}", f"{fault.consumed}/{fault.queued}", state, fault.detail)
    return table


# engine -------------------------------------------------------------------------------------
