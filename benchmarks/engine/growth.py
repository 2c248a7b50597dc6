"""Growth exponents: how a cost grows with the size of its input, on log-log axes."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

NEAR_LINEAR = 1.15
"""A growth exponent under this is reported as near-linear."""


def slope(x0: float, y0: float, x1: float, y1: float) -> float:
    """The log-log slope from ``(x0, y0)`` to ``(x1, y1)``: 1 when ``y`` grew as ``x`` did."""
    return math.log(y1 / y0) / math.log(x1 / x0)


def fit(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log ``ys`` on log ``xs``."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx
    )
