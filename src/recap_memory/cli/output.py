"""Where the CLI prints its tables."""

from __future__ import annotations

import sys

from rich.console import Console

PIPE_WIDTH = 120
"""Columns when stdout is a file or a pipe (Rich would assume 80 and squeeze tables)."""


def report_console() -> Console:
    """A console on stdout: the terminal's width, or :data:`PIPE_WIDTH` when redirected."""
    return Console(width=None if sys.stdout.isatty() else PIPE_WIDTH)
