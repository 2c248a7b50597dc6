"""O(new) per turn: a growing history is read once, then only what each turn adds — and
an edit anywhere is still seen (read whole again), never answered from stale knowledge."""

from __future__ import annotations

import pytest

from recap_memory import Budget, Compactor, InvalidHistoryError, Meter, Policy, Trigger
from recap_memory.prefix import PrefixCache
from tests.conftest import assistant, system, tool, user

POLICY = Policy(trigger=Trigger(chars=3_000), keep=Budget(chars=800))


def turn(n: int) -> list:
    return [
        user(f"Question {n}: what did the logs say about shard {n}?"),
        assistant(None, calls=[(f"c{n}", "logs")]),
        tool(f"c{n}", f"shard {n} latency {n * 37} ms " * 3),
        assistant(f"Shard {n} is slow: {n * 37} ms."),
    ]


class Counting(Meter):
    """A meter that counts the messages it measures."""

    def __init__(self) -> None:
        super().__init__()
        self.measured = 0

    def message(self, message):  # type: ignore[no-untyped-def]
        self.measured += 1
        return super().message(message)


def test_a_growing_history_is_measured_once_then_only_what_is_new():
    meter, cache = Counting(), PrefixCache()
    history = [system("You help."), *turn(0), *turn(1)]
    cache.read(history, meter)
    first = meter.measured
    history += turn(2)
    known = cache.read(history, meter)
    assert meter.measured - first == 4, "only the four new messages were measured"
    assert known.size == Meter().messages(history)  # no summary yet: all of it


def test_an_edit_in_the_middle_is_seen():
    compactor = Compactor(policy=POLICY)
    history = [system("You help."), *turn(0), *turn(1)]
    assert not compactor.compact_sync(history).report.compacted
    edited = list(history)
    edited[3] = tool("c0", "x" * 5_000, name="logs")  # now over the trigger
    assert compactor.compact_sync(edited).report.compacted
    broken = list(history)
    broken[3] = tool("nope", "orphan", name="logs")
    with pytest.raises(InvalidHistoryError, match="nope"):
        compactor.compact_sync(broken)


def test_a_new_result_without_its_call_is_refused_at_its_position():
    compactor = Compactor(policy=POLICY)
    history = [system("You help."), *turn(0)]
    compactor.compact_sync(history)
    with pytest.raises(InvalidHistoryError, match="message 5"):
        compactor.compact_sync([*history, tool("ghost", "no call")])


def test_turn_by_turn_answers_equal_a_fresh_engine_every_turn():
    cached, fresh_policy = Compactor(policy=POLICY), POLICY
    history: list = [system("You help.")]
    for n in range(12):
        history = history + turn(n)
        kept = cached.compact_sync(history)
        fresh = Compactor(policy=fresh_policy).compact_sync(history)
        assert kept.messages == fresh.messages
        assert kept.report.compacted == fresh.report.compacted
        history = kept.messages
