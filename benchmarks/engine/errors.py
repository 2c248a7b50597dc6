"""The error ``python -m benchmarks engine`` raises when it cannot measure."""

from __future__ import annotations

from recap_memory.errors import RecapError


class BenchFailed(RecapError):
    """A pass the benchmark needs did not happen: the policy did not fire, the strategy
    crashed, or (cumulative work) a summary was rejected."""
