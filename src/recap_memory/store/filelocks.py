"""Locks beside a SQLite file, for the processes that share it.

- ``<db>.migrate.lock``: a migration runs one process at a time, so processes starting
  together on a fresh file do not both create its tables;
- ``<db>.serve.lock``: one ``recap serve`` or ``recap worker`` per file, held for the
  process's life (the system drops it when the process dies, even by SIGKILL). Events
  reach the clients of the process that compacted only, and SQLite has one writer: several
  serving processes need PostgreSQL. ``<db>.serve.pid`` says who holds it.

PostgreSQL databases get no file locks (``None`` / no-op).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from recap_memory.errors import ConfigurationError
from recap_memory.store.urls import ensure_sqlite_directory, sqlite_file

MIGRATE_WAIT_S = 300.0
"""How long a migration waits for another process's to finish."""


@contextmanager
def migrating(url: str) -> Iterator[None]:
    """Hold the migration lock of ``url``'s SQLite file while the block runs."""
    path = sqlite_file(url)
    if path is None:
        yield
        return
    lock = FileLock(f"{path}.migrate.lock")
    try:
        lock.acquire(timeout=MIGRATE_WAIT_S)
    except Timeout:
        raise ConfigurationError(
            f"another process has been migrating {path} for {MIGRATE_WAIT_S:.0f} s: "
            f"wait for it to finish, or remove {lock.lock_file} if no recap runs"
        ) from None
    try:
        yield
    finally:
        lock.release()


def hold_database(url: str, command: str) -> FileLock | None:
    """Make this process (running ``command``) the one that serves ``url``'s SQLite file,
    until it exits or releases the lock returned; :class:`ConfigurationError` naming the
    holder when another process serves it. None (nothing to hold) on PostgreSQL."""
    path = sqlite_file(url)
    if path is None:
        return None
    ensure_sqlite_directory(url)
    lock = FileLock(f"{path}.serve.lock")
    holder = Path(f"{path}.serve.pid")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ConfigurationError(
            f"another recap process ({_describe(holder)}) serves {path}; SQLite allows one "
            "`recap serve` or `recap worker` per file: stop it, or use PostgreSQL "
            "(RECAP_DATABASE_URL=postgresql://…) to run several"
        ) from None
    holder.write_text(f"{os.getpid()} {command}\n")
    return lock


def _describe(holder: Path) -> str:
    """``pid N, recap serve`` from the holder's file (a stale or missing one says less)."""
    try:
        pid, _, command = holder.read_text().strip().partition(" ")
    except OSError:
        return "pid unknown"
    return f"pid {pid}, recap {command}" if pid.isdigit() else "pid unknown"
