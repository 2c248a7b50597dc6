"""``python -m benchmarks proxy``: the latency ``/v1/chat/completions`` adds."""

from __future__ import annotations

from typing import Annotated

import httpx
import typer
from rich.table import Table

from benchmarks.proxy import TARGET_MS, ProxyFigures, run
from recap_memory.cli.errors import describe, fail
from recap_memory.cli.output import report_console


def proxy(
    requests: Annotated[int, typer.Option(min=10, help="Timed requests of each kind")] = 300,
) -> None:
    """Chat completions sent to the stub model directly and through recap (stateless and
    with a session), alternating; the latency recap adds, against a target."""
    try:
        figures = run(requests)
    except (httpx.HTTPError, OSError, RuntimeError) as exc:
        fail(describe(exc))
    report_console().print(table(figures))


def table(figures: ProxyFigures) -> Table:
    """Each kind's latency, and what recap adds at the median."""
    table = Table(
        title=f"POST /v1/chat/completions, {figures.requests} requests each, nothing due",
        caption=f"added at the median: stateless {figures.added_stateless_ms:.2f} ms, session "
        f"{figures.added_session_ms:.2f} ms (target ≤ {TARGET_MS:.0f} ms)",
    )
    table.add_column("path")
    for column in ("median ms", "p99 ms"):
        table.add_column(column, justify="right")
    for name, latency in (
        ("stub model, directly", figures.direct),
        ("through recap, stateless", figures.stateless),
        ("through recap, X-Recap-Session", figures.session),
    ):
        table.add_row(name, f"{latency.median_ms:.2f}", f"{latency.p99_ms:.2f}")
    return table
