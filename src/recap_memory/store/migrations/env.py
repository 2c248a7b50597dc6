"""Alembic environment: migrates the database named by the config's ``sqlalchemy.url``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool, text

from recap_memory.store.models import Base

config = context.config
url = config.get_main_option("sqlalchemy.url")
assert url, "recap's migrations need sqlalchemy.url (use recap_memory.store.engine.migrate)"
MIGRATION_LOCK = 7_272_700_001
"""PostgreSQL advisory lock key: processes starting together migrate one after another."""

engine = create_engine(url, poolclass=pool.NullPool)
with engine.connect() as connection:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
