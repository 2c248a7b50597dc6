"""What one ``python -m benchmarks engine`` run measures, and how much."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Options:
    """How much ``python -m benchmarks engine`` measures."""

    sizes: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    """Conversation sizes in characters; the first is the baseline."""
    repeats: int = 7
    """Timed passes per size (median reported) below
    :data:`~benchmarks.engine.scaling.BIG_REPEATS_FROM` characters."""
    big_repeats: int = 3
    turns: int = 2_000
    """Turns of the generated conversation fed turn by turn."""
    trigger_chars: int = 60_000
    keep_chars: int = 20_000
    window: int = 8_192
    """Context window (tokens) of the fake model: long spans are summarized in chunks."""
    locomo: Path | None = None
    """A LoCoMo JSON file: its first conversation is fed turn by turn too."""
    seed: int = 7
    profile: bool | None = None
    """Profile the two largest sizes: always (True), never (False), when super-linear (None)."""
