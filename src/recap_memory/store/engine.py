"""Engines and schema migrations.

:func:`open_engine` builds the async engine for a user's database URL (SQLite
gets WAL, a busy timeout, foreign keys and ``BEGIN IMMEDIATE`` so writers
queue instead of failing); :func:`migrate` brings the schema to the newest
Alembic revision (on SQLite under a file lock: one process at a time) and
:func:`schema_status` says whether it is there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from recap_memory.store.filelocks import migrating
from recap_memory.store.urls import (
    DEFAULT_URL,
    async_url,
    ensure_sqlite_directory,
    is_sqlite,
    sync_url,
)

SQLITE_BUSY_TIMEOUT_MS = 30_000


CONNECT_TIMEOUT_S = 5
"""A database that does not answer within this fails the request (503) instead of hanging it."""


def open_engine(
    url: str, *, pool_size: int = 10, max_overflow: int = 10, pool_timeout_s: float = 10.0
) -> AsyncEngine:
    """The async engine for ``url`` (``sqlite:///…`` or ``postgresql://…``); PostgreSQL
    connections are checked before use, so a restarted server is reconnected to."""
    ensure_sqlite_directory(url)
    if is_sqlite(url):
        engine = create_async_engine(async_url(url), connect_args={"timeout": 30})
        _configure_sqlite(engine.sync_engine)
        return engine
    return create_async_engine(
        async_url(url),
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_timeout=pool_timeout_s,
        pool_pre_ping=True,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
    )


def _configure_sqlite(engine: Any) -> None:
    """WAL, busy timeout, foreign keys, and write transactions that take the lock up front."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # let SQLAlchemy's BEGIN below decide
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # One writer at a time, queued by busy_timeout: a deferred transaction that
        # reads and then writes could fail with "database is locked" instead.
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", "recap_memory.store:migrations")
    config.set_main_option("sqlalchemy.url", sync_url(url).render_as_string(hide_password=False))
    return config


@dataclass(frozen=True)
class SchemaStatus:
    """Where a database's schema stands against this version of recap."""

    current: str | None
    head: str

    @property
    def up_to_date(self) -> bool:
        """Whether the database is at the newest revision."""
        return self.current == self.head


def _migrate_sync(url: str) -> None:
    ensure_sqlite_directory(url)
    with migrating(url):  # processes starting together on a fresh file: one at a time
        command.upgrade(_alembic_config(url), "head")


def schema_head() -> str:
    """The newest schema revision this recap knows."""
    head = ScriptDirectory.from_config(_alembic_config(DEFAULT_URL)).get_current_head()
    assert head is not None
    return head


def _status_sync(url: str) -> SchemaStatus:
    head = schema_head()
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()
    return SchemaStatus(current, head)


async def migrate(url: str) -> None:
    """Upgrade the database at ``url`` to the newest schema (creating it when empty)."""
    await asyncio.to_thread(_migrate_sync, url)


async def schema_status(url: str) -> SchemaStatus:
    """The database's schema revision and the newest one this recap knows."""
    return await asyncio.to_thread(_status_sync, url)
