"""``python -m benchmarks``: benchmarks whose figures are ratios to a baseline of the same run.

One module per command: ``service`` and ``reliability`` (the memory service),
``proxy`` (the latency of ``/v1/chat/completions``), ``engine`` (the engine's growth
and summarization work), ``peers`` (recap beside LangChain and LangMem). Not installed
with recap: run from a checkout (``make bench``, ``make reliability``).
"""

from __future__ import annotations

import typer

from benchmarks.commands import engine, peers, proxy, service

app = typer.Typer(
    name="python -m benchmarks",
    help="Measure recap against baselines taken in the same run (ratios, not timings).",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command("service")(service.service)
app.command("reliability")(service.reliability)
app.command("engine")(engine.engine)
app.command("peers")(peers.peers)
app.command("proxy")(proxy.proxy)
