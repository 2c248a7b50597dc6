"""The ``recap`` command line: one Typer app, one module per command.

``compact`` and ``eval`` need only the slim core; ``serve``, ``worker`` and ``migrate``
import the server stack when they run (the ``[server]`` extra).
"""

from __future__ import annotations

from typing import Annotated

import typer

from recap_memory import __version__
from recap_memory.cli import compact, evaluate, serve

app = typer.Typer(
    name="recap",
    help="Keep long LLM conversations inside their context budget.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command("compact")(compact.compact)
app.command("eval")(evaluate.evaluate)
app.command("serve")(serve.serve)
app.command("worker")(serve.worker)
app.command("migrate")(serve.migrate)


def _show_version(value: bool) -> None:
    if value:
        print(f"recap-memory {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_show_version, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    """Keep long LLM conversations inside their context budget."""


def main() -> None:
    """Entry point of the ``recap`` console script."""
    app()
