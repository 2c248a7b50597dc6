"""``python -m benchmarks engine``: the engine's costs as ratios to baselines of the same run.

- **Scaling** (:mod:`.scaling`): one :meth:`Compactor.compact` pass (extractive strategy;
  a policy that fires, keeps 20% and caps the summary at 5% of the conversation) over
  generated conversations of growing size. Each size's median time is set against the
  smallest size's (the baseline), and the log-log slope between sizes is the growth
  exponent (:mod:`.growth`): 1 means linear. Profiling runs the two largest sizes under
  :mod:`cProfile` and names the functions whose time grows faster than the input
  (:mod:`.hotspots`, file:line).
- **Cumulative work** (:mod:`.cumulative`): a long conversation fed turn by turn; after
  every turn it is compacted when the policy says it is due, as an app would, with the
  ``llm`` strategy over a recording :class:`~recap_memory.llm.fake.FakeModel`
  (:mod:`.fake_summaries`). The baseline re-summarizes the whole history from scratch at
  the same triggers, over the same kind of model. Both are reported as model input
  tokens per conversation token, at 25%, 50%, 75% and 100% of the conversation.

Conversations are generated from a seed (:mod:`benchmarks.conversations`: chat turns and
agent turns whose tool calls return JSON), so every run measures the same input; a
LoCoMo conversation can be added. This module runs the whole benchmark.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.conversations import conversation
from benchmarks.engine.cumulative import Cumulative, measure_cumulative
from benchmarks.engine.growth import NEAR_LINEAR
from benchmarks.engine.options import Options
from benchmarks.engine.scaling import Scaling, measure_scaling
from recap_memory.eval.locomo import conversation_messages
from recap_memory.messages import Message

__all__ = ["Cumulative", "EngineFigures", "Options", "Scaling", "measure", "run"]


@dataclass(frozen=True)
class EngineFigures:
    """Everything one ``python -m benchmarks engine`` run measured."""

    options: Options
    scaling: Scaling
    cumulative: tuple[Cumulative, ...] = field(default=())
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready data."""
        options = {**asdict(self.options), "locomo": str(self.options.locomo or "") or None}
        return {
            "options": options,
            "scaling": {
                **asdict(self.scaling),
                "near_linear_below": NEAR_LINEAR,
                "near_linear": self.scaling.near_linear,
                "verdict": self.scaling.verdict,
            },
            "cumulative": [
                {
                    **asdict(c),
                    "recap_growth": c.growth("recap"),
                    "baseline_growth": c.growth("baseline"),
                }
                for c in self.cumulative
            ],
            "seconds": self.seconds,
        }


def locomo_conversation(path: Path) -> list[Message]:
    """The first conversation of a LoCoMo JSON file, as chat messages."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return conversation_messages(data[0])


async def measure(options: Options) -> EngineFigures:
    """Scaling, then cumulative work on the generated (and LoCoMo) conversations."""
    started = time.perf_counter()
    scale = await measure_scaling(options)
    runs = [("generated", conversation(turns=options.turns, seed=options.seed))]
    if options.locomo is not None:
        runs.append(("locomo", locomo_conversation(options.locomo)))
    works = tuple([await measure_cumulative(name, msgs, options) for name, msgs in runs])
    return EngineFigures(options, scale, works, time.perf_counter() - started)


def run(options: Options) -> EngineFigures:
    """:func:`measure` in its own event loop."""
    return asyncio.run(measure(options))
