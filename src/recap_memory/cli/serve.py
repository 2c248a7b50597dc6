"""``recap serve``, ``recap worker`` and ``recap migrate``: the memory service's processes.

The commands are declared here with nothing heavier than Typer; the server stack
(:mod:`recap_memory.cli.service_processes`, the ``[server]`` extra) is imported when one
of them runs, so ``recap compact`` and ``recap eval`` never load it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Annotated

import typer

from recap_memory.cli.errors import fail

SERVER_EXTRA = "pip install 'recap-memory[server]'"


def _processes() -> ModuleType:
    try:
        from recap_memory.cli import service_processes
    except ModuleNotFoundError as exc:
        fail(f"the memory service needs the server extra ({exc.name} is missing): {SERVER_EXTRA}")
    return service_processes


def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on (env RECAP_HOST)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (env RECAP_PORT)")] = None,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Debug logging")] = False,
) -> None:
    """Run the memory service (HTTP API, docs at /docs, background compaction)."""
    _processes().serve(host=host, port=port, verbose=verbose)


def worker(
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Debug logging")] = False,
) -> None:
    """Compact due sessions of RECAP_DATABASE_URL until stopped (SIGTERM finishes the
    compaction in flight)."""
    _processes().worker(verbose=verbose)


def migrate() -> None:
    """Upgrade the schema of RECAP_DATABASE_URL to this version of recap."""
    _processes().migrate()
