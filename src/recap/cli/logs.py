"""How the CLI shows the engine's log lines: on stderr, ``recap: warning: …``."""

from __future__ import annotations

import logging
import sys


def configure(verbose: bool, level: str = "INFO", quiet: int = logging.WARNING) -> None:
    """Warnings (retries, fallbacks, rejected summaries) always — or what ``quiet`` says —
    and ``level`` with ``verbose``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter("recap: %(levelname)s: %(message)s"))
    root = logging.getLogger("recap")
    root.handlers[:] = [handler]
    root.setLevel(level if verbose else quiet)
    root.propagate = False


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        record.levelname = record.levelname.lower()
        return super().format(record)
