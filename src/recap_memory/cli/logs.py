"""How recap's processes write log lines: on stderr, with time, level, request and session.

Text by default (``2026-11-30T19:46:21.512Z warning recap_memory.compactor
request=abc12345 session=1b2c…: message``), one JSON object a line with
``RECAP_LOG_FORMAT=json``. The request and session come from
:func:`recap_memory.logcontext.log_context`, set where a request or a compaction starts.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Literal

from recap_memory.cli.errors import fail
from recap_memory.errors import ConfigurationError
from recap_memory.logcontext import current_context

LogFormat = Literal["text", "json"]
FORMATS: tuple[LogFormat, ...] = ("text", "json")


def log_format() -> LogFormat:
    """``RECAP_LOG_FORMAT`` (``text`` when unset); any other value is a configuration error."""
    value = os.environ.get("RECAP_LOG_FORMAT", "text").strip().lower() or "text"
    if value not in FORMATS:
        raise ConfigurationError(
            f"RECAP_LOG_FORMAT={value!r} is not a log format: use text or json"
        )
    return value


def configure(
    verbose: bool,
    level: str = "INFO",
    quiet: int = logging.WARNING,
    fmt: LogFormat | None = None,
    service: bool = False,
) -> None:
    """Warnings (retries, fallbacks, rejected summaries) always — or what ``quiet`` says —
    and ``level`` with ``verbose``; in ``fmt`` (``RECAP_LOG_FORMAT`` when not given).

    A ``service`` process (serve, worker) stamps text lines with time, level, logger,
    request and session; a one-shot command writes ``recap: warning: message``."""
    handler = logging.StreamHandler(sys.stderr)
    formatter: logging.Formatter
    try:
        chosen = fmt or log_format()
    except ConfigurationError as exc:
        fail(str(exc))
    if chosen == "json":
        formatter = JsonFormatter()
    else:
        formatter = TextFormatter() if service else CommandFormatter()
    handler.setFormatter(formatter)
    root = logging.getLogger("recap_memory")
    root.handlers[:] = [handler]
    root.setLevel(level if verbose else quiet)
    root.propagate = False


def _timestamp(record: logging.LogRecord) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{stamp}.{int(record.msecs):03d}Z"


class CommandFormatter(logging.Formatter):
    """``recap: warning: message``, for one-shot commands a person reads."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"recap: {record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class TextFormatter(logging.Formatter):
    """``TIME level logger request=… session=…: message`` (the ids only when known)."""

    def format(self, record: logging.LogRecord) -> str:
        ids = "".join(f" {k}={v}" for k, v in current_context().items())
        line = (
            f"{_timestamp(record)} {record.levelname.lower()} {record.name}{ids}: "
            f"{record.getMessage()}"
        )
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request, session, error."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **current_context(),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)
