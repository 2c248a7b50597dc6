"""Alembic migrations of recap's schema (run by :func:`recap_memory.store.engine.migrate`)."""
