"""``recap bench``: benchmarks whose figures are ratios to a baseline of the same run.

One module per command: ``service`` and ``reliability`` (the memory service),
``engine`` (the engine's growth and summarization work), ``peers`` (recap beside
LangChain and LangMem).
"""

from __future__ import annotations

import typer

from recap.cli.bench import engine, peers, service

app = typer.Typer(
    name="bench",
    help="Measure recap against baselines taken in the same run (ratios, not timings).",
    no_args_is_help=True,
)
app.command("service")(service.service)
app.command("reliability")(service.reliability)
app.command("engine")(engine.engine)
app.command("peers")(peers.peers)
