"""How the CLI reports a problem: one line on stderr and a documented exit code.

Exit codes: 0 done; 2 bad input or settings (nothing was done); 3 a compaction failed
and had no fallback (``--fallback none``): nothing was written.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from pydantic import ValidationError

from recap_memory.errors import RecapError

BAD_INPUT = 2
COMPACTION_FAILED = 3


def fail(message: str, code: int = BAD_INPUT) -> NoReturn:
    """Print ``recap: error: message`` on stderr and exit with ``code`` (2: bad input)."""
    print(f"recap: error: {message}", file=sys.stderr)
    raise typer.Exit(code)


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
