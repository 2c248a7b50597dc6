"""Adapters between recap messages and other frameworks' message types."""
