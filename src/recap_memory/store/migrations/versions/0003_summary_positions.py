"""Summary rows keep the positions they cover (1…n from the session's start), so the header the
model reads and the console show "messages 1–30", not database ids. Existing rows are numbered
by counting the session's messages up to their first and last id.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 03:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

COLUMNS = {"first_position": "first_message_id", "last_position": "last_message_id"}


def upgrade() -> None:
    for column in COLUMNS:
        op.add_column("summaries", sa.Column(column, sa.Integer(), nullable=True))
    for column, bound in COLUMNS.items():
        op.execute(
            f"UPDATE summaries SET {column} = (SELECT count(*) FROM messages "
            "WHERE messages.session_id = summaries.session_id "
            f"AND messages.id <= summaries.{bound})"
        )


def downgrade() -> None:
    for column in COLUMNS:
        op.drop_column("summaries", column)
