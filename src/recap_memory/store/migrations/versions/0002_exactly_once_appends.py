"""Exactly-once appends: messages keep the client's id (unique per session), and writes made
under an Idempotency-Key keep their answer.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 23:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.add_column("messages", sa.Column("client_id", sa.String(length=200), nullable=True))
    op.create_index(
        "uq_messages_session_client", "messages", ["session_id", "client_id"], unique=True
    )
    op.create_table(
        "idempotency_keys",
        sa.Column("id", ID, nullable=False),
        sa.Column("tenant", sa.String(length=200), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("response", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant", "key", name="uq_idempotency_keys_tenant_key"),
    )
    op.create_index(
        "ix_idempotency_keys_tenant_created_at",
        "idempotency_keys",
        ["tenant", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_idempotency_keys_tenant_created_at", table_name="idempotency_keys")
    op.drop_table("idempotency_keys")
    op.drop_index("uq_messages_session_client", table_name="messages")
    op.drop_column("messages", "client_id")
