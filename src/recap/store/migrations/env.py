"""Alembic environment: migrates the database named by the config's ``sqlalchemy.url``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from recap.store.models import Base

config = context.config
url = config.get_main_option("sqlalchemy.url")
assert url, "recap's migrations need sqlalchemy.url (use recap.store.engine.migrate)"
engine = create_engine(url, poolclass=pool.NullPool)
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
