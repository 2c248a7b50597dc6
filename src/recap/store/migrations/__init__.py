"""Alembic migrations of recap's schema (run by :func:`recap.store.engine.migrate`)."""
