"""Initial schema: sessions (with gate counters), messages, summaries, usage events.

Revision ID: 0001
Revises:
Create Date: 2026-11-30 01:17:19.008870
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "sessions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("tenant", sa.String(length=200), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("char_count", sa.BigInteger(), nullable=False),
        sa.Column("token_count", sa.BigInteger(), nullable=False),
        sa.Column(
            "last_message_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("context_messages", sa.Integer(), nullable=False),
        sa.Column("context_chars", sa.BigInteger(), nullable=False),
        sa.Column("context_tokens", sa.BigInteger(), nullable=False),
        sa.Column("pending_messages", sa.Integer(), nullable=False),
        sa.Column(
            "summarized_through",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=True,
        ),
        sa.Column("open_tool_calls", sa.JSON(), nullable=False),
        sa.Column("due_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("lease_token", sa.String(length=36), nullable=True),
        sa.Column("lease_owner", sa.String(length=200), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid"),
    )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sessions_due_since"), ["due_since"], unique=False)
        batch_op.create_index(batch_op.f("ix_sessions_tenant"), ["tenant"], unique=False)

    op.create_table(
        "messages",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "session_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.create_index("ix_messages_session_id_id", ["session_id", "id"], unique=False)
        batch_op.create_index("ix_messages_session_id_role", ["session_id", "role"], unique=False)

    op.create_table(
        "summaries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "session_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column(
            "first_message_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column(
            "last_message_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("instructions", sa.JSON(), nullable=False),
        sa.Column("carried", sa.JSON(), nullable=False),
        sa.Column("messages", sa.Integer(), nullable=False),
        sa.Column("source_chars", sa.BigInteger(), nullable=False),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("strategy", sa.String(length=50), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "superseded_by", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", "last_message_id", name="uq_summaries_session_last"),
    )
    with op.batch_alter_table("summaries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_summaries_session_id_superseded_by", ["session_id", "superseded_by"], unique=False
        )

    op.create_table(
        "usage_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("tenant", sa.String(length=200), nullable=False),
        sa.Column(
            "session_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("path", sa.String(length=20), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("strategy", sa.String(length=50), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("messages_removed", sa.Integer(), nullable=False),
        sa.Column("chars_removed", sa.BigInteger(), nullable=False),
        sa.Column("tokens_saved", sa.BigInteger(), nullable=False),
        sa.Column("chars_before", sa.BigInteger(), nullable=False),
        sa.Column("chars_after", sa.BigInteger(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.Double(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("usage_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_usage_events_created_at"), ["created_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_usage_events_session_id"), ["session_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_usage_events_tenant"), ["tenant"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("usage_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_usage_events_tenant"))
        batch_op.drop_index(batch_op.f("ix_usage_events_session_id"))
        batch_op.drop_index(batch_op.f("ix_usage_events_created_at"))

    op.drop_table("usage_events")
    with op.batch_alter_table("summaries", schema=None) as batch_op:
        batch_op.drop_index("ix_summaries_session_id_superseded_by")

    op.drop_table("summaries")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("ix_messages_session_id_role")
        batch_op.drop_index("ix_messages_session_id_id")

    op.drop_table("messages")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sessions_tenant"))
        batch_op.drop_index(batch_op.f("ix_sessions_due_since"))

    op.drop_table("sessions")
