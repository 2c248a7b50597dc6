"""Database URLs as users write them, translated to the drivers recap uses.

Users give the usual forms (``sqlite:///path/recap.db``,
``postgresql://user@host:5432/db``); inside, the async engine speaks
``sqlite+aiosqlite`` / ``postgresql+psycopg`` and migrations the sync
``sqlite`` / ``postgresql+psycopg`` forms of the same URL.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from recap_memory.errors import ConfigurationError

DEFAULT_URL = "sqlite:///recap.db"
_ASYNC = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+psycopg"}
_SYNC = {"sqlite": "sqlite", "postgresql": "postgresql+psycopg"}


def _parse(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigurationError(
            f"RECAP_DATABASE_URL {url!r} is not a database URL; write "
            "sqlite:///path/recap.db or postgresql://user@host:5432/db"
        ) from exc
    backend = parsed.get_backend_name()
    if backend not in _ASYNC:
        raise ConfigurationError(
            f"RECAP_DATABASE_URL uses {backend!r}; recap stores sessions in sqlite or postgresql"
        )
    if backend == "sqlite" and parsed.database in (None, "", ":memory:"):
        raise ConfigurationError(
            "RECAP_DATABASE_URL must name a SQLite file (sqlite:///path/recap.db): an in-memory "
            "database would vanish between the server's connections"
        )
    return parsed


def async_url(url: str) -> URL:
    """``url`` for the async engine (aiosqlite / psycopg)."""
    parsed = _parse(url)
    return parsed.set(drivername=_ASYNC[parsed.get_backend_name()])


def sync_url(url: str) -> URL:
    """``url`` for synchronous tools (Alembic migrations)."""
    parsed = _parse(url)
    return parsed.set(drivername=_SYNC[parsed.get_backend_name()])


def is_sqlite(url: str) -> bool:
    """Whether ``url`` names a SQLite database."""
    return _parse(url).get_backend_name() == "sqlite"


def sqlite_file(url: str) -> Path | None:
    """The absolute path of ``url``'s SQLite file (None for PostgreSQL)."""
    parsed = _parse(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    return Path(parsed.database).expanduser().absolute()


def ensure_sqlite_directory(url: str) -> None:
    """Create the folder of a SQLite file when it does not exist yet."""
    parsed = _parse(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def libpq_url(url: str) -> str:
    """A PostgreSQL ``url`` as libpq reads it (for a raw psycopg connection: LISTEN)."""
    return _parse(url).set(drivername="postgresql").render_as_string(hide_password=False)
