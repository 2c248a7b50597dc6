"""The tables: sessions (with their gate counters), messages, summaries, usage events.

Messages are append-only: compaction never deletes or edits one. A session's
row carries the counters the per-turn gate needs (so deciding "due or not"
never reads the messages), the compaction state (due since, lease, backoff)
and the tool calls still waiting for their results.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from recap_memory.clock import utcnow

Id = BigInteger().with_variant(Integer(), "sqlite")
"""64-bit keys on PostgreSQL; on SQLite an INTEGER PRIMARY KEY (64-bit, autoincrementing)."""


class UTC(TypeDecorator[dt.datetime]):
    """A UTC timestamp that comes back timezone-aware from SQLite and PostgreSQL alike."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        value = value.astimezone(dt.UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        assert isinstance(value, dt.datetime)
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value


class Base(DeclarativeBase):
    """Declarative base of recap's tables."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dt.datetime: UTC,
        dict[str, Any]: JSON,
        list[Any]: JSON,
    }


class SessionRecord(Base):
    """One conversation, with its gate counters and compaction state."""

    __tablename__ = "sessions"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    tenant: Mapped[str] = mapped_column(String(200), index=True)
    title: Mapped[str | None] = mapped_column(String(500))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # the whole record
    message_count: Mapped[int] = mapped_column(default=0)
    char_count: Mapped[int] = mapped_column(BigInteger, default=0)
    token_count: Mapped[int] = mapped_column(BigInteger, default=0)
    last_message_id: Mapped[int | None] = mapped_column(Id)
    # what the model sees now: system messages, the summary, carried and recent messages
    context_messages: Mapped[int] = mapped_column(default=0)
    context_chars: Mapped[int] = mapped_column(BigInteger, default=0)
    context_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    pending_messages: Mapped[int] = mapped_column(default=0)
    """Messages appended since the last compaction attempt."""
    summarized_through: Mapped[int | None] = mapped_column(Id)
    """Id of the last message folded into the summary chain."""
    open_tool_calls: Mapped[list[Any]] = mapped_column(default=list)
    """Ids of tool calls of the last assistant message still waiting for their results."""
    # compaction state
    due_since: Mapped[dt.datetime | None] = mapped_column(index=True)
    next_attempt_at: Mapped[dt.datetime | None]
    failures: Mapped[int] = mapped_column(default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    lease_token: Mapped[str | None] = mapped_column(String(36))
    lease_owner: Mapped[str | None] = mapped_column(String(200))
    lease_expires_at: Mapped[dt.datetime | None]

    def leased_at(self, now: dt.datetime) -> bool:
        """Whether a compaction lease on the session is live at ``now``."""
        return self.lease_expires_at is not None and self.lease_expires_at >= now


class MessageRecord(Base):
    """One message as appended (its OpenAI dict), with its measured size."""

    __tablename__ = "messages"
    __table_args__ = (
        Index("ix_messages_session_id_id", "session_id", "id"),
        Index("ix_messages_session_id_role", "session_id", "role"),
        Index("uq_messages_session_client", "session_id", "client_id", unique=True),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    session_id: Mapped[int] = mapped_column(Id, ForeignKey("sessions.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))
    client_id: Mapped[str | None] = mapped_column(String(200))
    """The client's own id for the message (its ``id``); unique within the session, so a
    retried append skips the messages the session already holds."""
    payload: Mapped[dict[str, Any]]
    chars: Mapped[int] = mapped_column(Integer)
    tokens: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class SummaryRecord(Base):
    """One row of a session's summary chain; a cumulative update supersedes the rows it merges."""

    __tablename__ = "summaries"
    __table_args__ = (
        UniqueConstraint("session_id", "last_message_id", name="uq_summaries_session_last"),
        Index("ix_summaries_session_id_superseded_by", "session_id", "superseded_by"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    session_id: Mapped[int] = mapped_column(Id, ForeignKey("sessions.id", ondelete="CASCADE"))
    first_message_id: Mapped[int] = mapped_column(Id)
    last_message_id: Mapped[int] = mapped_column(Id)
    first_position: Mapped[int | None] = mapped_column(Integer)
    """The first covered message's position in the session (1…n); the header shows it."""
    last_position: Mapped[int | None] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    instructions: Mapped[list[Any]] = mapped_column(default=list)
    carried: Mapped[list[Any]] = mapped_column(default=list)
    """Ids of messages inside the range carried verbatim (pinned, with their tool groups)."""
    messages: Mapped[int] = mapped_column(Integer)
    source_chars: Mapped[int] = mapped_column(BigInteger)
    chars: Mapped[int] = mapped_column(Integer)
    tokens: Mapped[int] = mapped_column(Integer)
    strategy: Mapped[str] = mapped_column(String(50))
    model: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    superseded_by: Mapped[int | None] = mapped_column(Id)


class UsageEvent(Base):
    """Every model call and every compaction pass, with what it did."""

    __tablename__ = "usage_events"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    tenant: Mapped[str] = mapped_column(String(200), index=True)
    session_id: Mapped[int | None] = mapped_column(
        Id, ForeignKey("sessions.id", ondelete="SET NULL"), index=True
    )
    kind: Mapped[str] = mapped_column(String(20))
    """``compaction`` or ``model_call``."""
    path: Mapped[str | None] = mapped_column(String(20))
    """llm / fallback / skipped / failed (compactions); ok / error (model calls)."""
    reason: Mapped[str | None] = mapped_column(Text)
    strategy: Mapped[str | None] = mapped_column(String(50))
    model: Mapped[str | None] = mapped_column(String(200))
    messages_removed: Mapped[int] = mapped_column(default=0)
    chars_removed: Mapped[int] = mapped_column(BigInteger, default=0)
    tokens_saved: Mapped[int] = mapped_column(BigInteger, default=0)
    chars_before: Mapped[int] = mapped_column(BigInteger, default=0)
    chars_after: Mapped[int] = mapped_column(BigInteger, default=0)
    prompt_tokens: Mapped[int] = mapped_column(default=0)
    completion_tokens: Mapped[int] = mapped_column(default=0)
    duration_ms: Mapped[float] = mapped_column(default=0.0)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow, index=True)


class IdempotencyRecord(Base):
    """A write made under an ``Idempotency-Key``: what was asked (its fingerprint) and what
    was answered, committed with the write itself, so a retry gets the same answer."""

    __tablename__ = "idempotency_keys"
    __table_args__ = (
        UniqueConstraint("tenant", "key", name="uq_idempotency_keys_tenant_key"),
        Index("ix_idempotency_keys_tenant_created_at", "tenant", "created_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    tenant: Mapped[str] = mapped_column(String(200))
    key: Mapped[str] = mapped_column(String(200))
    fingerprint: Mapped[str] = mapped_column(String(64))
    """SHA-256 of the request's method, path and body."""
    response: Mapped[dict[str, Any]]
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
