"""The request and session a log line belongs to, carried in context variables.

Set with :func:`log_context` where a request or a compaction starts; every log line
written inside (in the same task, or tasks it starts) carries them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_context: ContextVar[dict[str, str]] = ContextVar("recap_log_context", default={})  # noqa: B039


@contextmanager
def log_context(*, request: str | None = None, session: object | None = None) -> Iterator[None]:
    """Log lines inside carry ``request`` and ``session`` (those given) as well."""
    added = {k: str(v) for k, v in (("request", request), ("session", session)) if v is not None}
    token = _context.set({**_context.get(), **added})
    try:
        yield
    finally:
        _context.reset(token)


def current_context() -> dict[str, str]:
    """The request and session of the code running now (those known)."""
    return _context.get()
