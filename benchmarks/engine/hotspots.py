"""Hotspots: the functions whose own time grows faster than the input between two sizes,
found by running one compaction pass at each size under :mod:`cProfile`."""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import recap_memory
from benchmarks.engine.growth import slope
from recap_memory.compactor import Compactor
from recap_memory.counting import Meter
from recap_memory.messages import Message

Key = tuple[str, int, str]
"""A profiled function: file, line, name (as :mod:`pstats` keys them)."""
CompactorFor = Callable[[Sequence[Message]], Compactor]
"""Builds the compactor that a pass over the given messages runs with."""


@dataclass(frozen=True)
class Hotspot:
    """A function whose own time grows faster than the input between the two largest sizes."""

    where: str
    """``path:line(function)`` (paths inside recap from the package's folder), or a
    built-in's name."""
    caller: str
    """The caller that spent the most time in it (same form; empty for the root)."""
    small_ms: float
    large_ms: float
    exponent: float | None
    """Log-log slope of its own time between the two sizes (None when absent at the small)."""
    excess_ms: float
    """Its time at the large size beyond linear growth from the small one."""


def where(key: Key) -> str:
    """``path:line(function)``, paths inside recap from the package's folder."""
    path, line, name = key
    root = str(Path(recap_memory.__file__).parent.parent) + "/"
    return name if path == "~" else f"{path.removeprefix(root)}:{line}({name})"


async def own_times(
    compactor: Compactor, messages: Sequence[Message]
) -> dict[str, tuple[float, str]]:
    """Own time (ms) of every function during one pass over ``messages``, and the caller
    that spent the most time in it."""
    profiler = cProfile.Profile()
    profiler.enable()
    await compactor.compact(messages)
    profiler.disable()
    stats: dict[Key, tuple[int, int, float, float, dict[Key, tuple[Any, ...]]]]
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    return {
        where(key): (
            own * 1000,
            where(max(callers, key=lambda c: callers[c][3])) if callers else "",
        )
        for key, (_, _, own, _, callers) in stats.items()
    }


async def hotspots(
    small: Sequence[Message], large: Sequence[Message], compactor_for: CompactorFor, top: int = 5
) -> tuple[Hotspot, ...]:
    """The ``top`` functions whose own time grew most beyond linear from a pass over
    ``small`` to one over ``large`` (each with a fresh ``compactor_for`` its messages)."""
    ratio = Meter().messages(large).chars / Meter().messages(small).chars
    before = await own_times(compactor_for(small), small)
    after = await own_times(compactor_for(large), large)
    spots = []
    for name, (ms, caller) in after.items():
        was = before.get(name, (0.0, ""))[0]
        exponent = slope(1, was, ratio, ms) if was > 0 and ms > 0 else None
        spots.append(Hotspot(name, caller, was, ms, exponent, ms - was * ratio))
    return tuple(sorted(spots, key=lambda s: -s.excess_ms)[:top])
