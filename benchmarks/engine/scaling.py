"""Scaling: one :meth:`Compactor.compact` pass (extractive strategy) timed over generated
conversations of growing size, each size's median set against the smallest size's."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.conversations import conversation
from benchmarks.engine.errors import BenchFailed
from benchmarks.engine.growth import NEAR_LINEAR, fit, slope
from benchmarks.engine.hotspots import Hotspot, hotspots
from benchmarks.engine.options import Options
from recap_memory.compactor import Compactor
from recap_memory.counting import Meter
from recap_memory.messages import Message
from recap_memory.policy import Budget, Policy, Trigger
from recap_memory.summarizers.extractive import ExtractiveSummarizer

BIG_REPEATS_FROM = 1_000_000
"""Sizes from this many characters are timed ``big_repeats`` times (they take seconds)."""


@dataclass(frozen=True)
class SizeRow:
    """One conversation size, timed."""

    target_chars: int
    chars: int
    messages: int
    repeats: int
    median_ms: float
    ms_per_1k_chars: float
    size_ratio: float
    """Characters ÷ the baseline's."""
    time_ratio: float
    """Median time ÷ the baseline's."""
    cost_per_char_ratio: float
    """ms per character ÷ the baseline's: 1 means the cost grew exactly with the size."""
    exponent: float | None
    """Log-log slope from the previous size (None for the baseline)."""
    outcome: str = "summarized"
    """The pass's report: ``summarized``, or ``rejected: <reason>`` (timed all the same:
    the work was done, only the view was not assembled)."""


@dataclass(frozen=True)
class Scaling:
    """Every size's figures and the overall growth exponent."""

    rows: tuple[SizeRow, ...]
    exponent: float
    """Least-squares log-log slope over all sizes."""
    hotspots: tuple[Hotspot, ...] = ()

    @property
    def near_linear(self) -> bool:
        """Whether the overall exponent is under :data:`NEAR_LINEAR`."""
        return self.exponent < NEAR_LINEAR

    @property
    def verdict(self) -> str:
        """One line: the exponent and what it means."""
        kind = "near-linear" if self.near_linear else "super-linear"
        return f"growth exponent {self.exponent:.2f} ({kind})"


@dataclass(frozen=True)
class _Timed:
    """One size's timed passes, before they are set against the baseline."""

    target_chars: int
    messages: list[Message]
    chars: int
    repeats: int
    median_ms: float
    outcome: str


def scaling_policy(chars: int) -> Policy:
    """A policy that fires on ``chars`` characters: keep 20%, a summary of at most 5%."""
    return Policy(
        trigger=Trigger(chars=max(2, chars // 2)),
        keep=Budget(chars=max(1, chars // 5)),
        summary_max=Budget(chars=max(200, chars // 20)),
    )


def scaling_compactor(messages: Sequence[Message]) -> Compactor:
    """The extractive compactor under :func:`scaling_policy` for ``messages``' size."""
    return Compactor(ExtractiveSummarizer(), scaling_policy(Meter().messages(messages).chars))


async def _timed_pass(compactor: Compactor, messages: Sequence[Message]) -> tuple[float, str]:
    """One compaction in milliseconds, and its outcome. A summary rejected by validation
    is timed (the work was done); a pass that did not fire or crashed raises
    :class:`BenchFailed`."""
    gc.collect()
    started = time.perf_counter()
    result = await compactor.compact(messages)
    elapsed = (time.perf_counter() - started) * 1000
    report = result.report
    if report.path == "skipped":
        raise BenchFailed(f"the policy did not fire: {report.reason}")
    if not report.compacted and "summary rejected" not in (report.reason or ""):
        raise BenchFailed(f"the pass failed: {report.reason}")  # a crash: no work to time
    return elapsed, report.path if report.compacted else f"{report.path}: {report.reason}"


async def _time_size(target: int, options: Options) -> _Timed:
    """A warm-up pass, then the median of the timed passes over a ``target``-char conversation."""
    messages = conversation(chars=target, seed=options.seed)
    compactor = scaling_compactor(messages)
    await _timed_pass(compactor, messages)  # warm-up: caches, lazy imports
    repeats = options.repeats if target < BIG_REPEATS_FROM else options.big_repeats
    samples = [await _timed_pass(compactor, messages) for _ in range(repeats)]
    median = statistics.median(ms for ms, _ in samples)
    chars = Meter().messages(messages).chars
    return _Timed(target, messages, chars, repeats, median, samples[-1][1])


def _rows(timed: Sequence[_Timed]) -> tuple[SizeRow, ...]:
    """Every size's figures against the first (the baseline) and the size before it."""
    base = timed[0]
    rows: list[SizeRow] = []
    for t in timed:
        ms, chars = t.median_ms, t.chars
        exponent = slope(rows[-1].chars, rows[-1].median_ms, chars, ms) if rows else None
        rows.append(SizeRow(
            t.target_chars, chars, len(t.messages), t.repeats, ms, ms / chars * 1000,
            chars / base.chars, ms / base.median_ms,
            (ms / chars) / (base.median_ms / base.chars), exponent, t.outcome,
        ))  # fmt: skip
    return tuple(rows)


async def measure_scaling(options: Options) -> Scaling:
    """Time a pass at every size of ``options``; profile the two largest when asked (or,
    by default, when the growth is super-linear)."""
    timed = [await _time_size(target, options) for target in options.sizes]
    rows = _rows(timed)
    overall = fit([r.chars for r in rows], [r.median_ms for r in rows])
    profile = options.profile if options.profile is not None else overall >= NEAR_LINEAR
    spots: tuple[Hotspot, ...] = ()
    if profile and len(timed) > 1:
        spots = await hotspots(timed[-2].messages, timed[-1].messages, scaling_compactor)
    return Scaling(rows, overall, spots)
