"""How the CLI reports a problem: one line on stderr, exit code 2."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from pydantic import ValidationError

from recap.errors import RecapError

BAD_INPUT = 2


def fail(message: str) -> NoReturn:
    """Print ``recap: error: message`` on stderr and exit with code 2."""
    print(f"recap: error: {message}", file=sys.stderr)
    raise typer.Exit(BAD_INPUT)


def describe(exc: Exception) -> str:
    """One readable line for an input or settings error."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        return f"{where}: {message}" if where else message
    if isinstance(exc, RecapError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
