"""Evaluation: how much of what later questions need survives a compaction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def records_with(data: Any, keys: set[str]) -> bool:
    """Whether parsed JSON is a non-empty list of objects whose first one has ``keys``."""
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], Mapping)
        and keys <= data[0].keys()
    )
