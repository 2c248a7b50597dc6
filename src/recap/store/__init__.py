"""Storage of sessions, messages, summaries and usage events (SQLite or PostgreSQL)."""

from recap.store.engine import SchemaStatus, migrate, open_engine, schema_status
from recap.store.repository import Appended, Claim, LeaseLost, Loaded, Store, usage_events
from recap.store.urls import DEFAULT_URL

__all__ = [
    "DEFAULT_URL",
    "Appended",
    "Claim",
    "LeaseLost",
    "Loaded",
    "SchemaStatus",
    "Store",
    "migrate",
    "open_engine",
    "schema_status",
    "usage_events",
]
