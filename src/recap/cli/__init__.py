"""The ``recap`` command line: one Typer app, one module per command."""

from __future__ import annotations

import typer

from recap.cli import bench, compact, evaluate, serve

app = typer.Typer(
    name="recap",
    help="Keep long LLM conversations inside their context budget.",
    no_args_is_help=True,
    add_completion=False,
)
app.command("compact")(compact.compact)
app.command("eval")(evaluate.evaluate)
app.command("serve")(serve.serve)
app.command("worker")(serve.worker)
app.command("migrate")(serve.migrate)
app.add_typer(bench.app, name="bench")


def main() -> None:
    """Entry point of the ``recap`` console script."""
    app()
