"""Integrations with agent frameworks (optional extras)."""
