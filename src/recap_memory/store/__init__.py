"""Storage of sessions, messages, summaries and usage events (SQLite or PostgreSQL)."""

from recap_memory.store.engine import SchemaStatus, migrate, open_engine, schema_status
from recap_memory.store.repository import (
    Appended,
    Claim,
    Created,
    History,
    Idempotency,
    LeaseLost,
    Loaded,
    Sessionless,
    Store,
    usage_events,
)
from recap_memory.store.urls import DEFAULT_URL

__all__ = [
    "DEFAULT_URL",
    "Appended",
    "Claim",
    "Created",
    "History",
    "Idempotency",
    "LeaseLost",
    "Loaded",
    "SchemaStatus",
    "Sessionless",
    "Store",
    "migrate",
    "open_engine",
    "schema_status",
    "usage_events",
]
