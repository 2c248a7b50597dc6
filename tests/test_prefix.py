"""O(new) per turn: a growing history is read once, then only what each turn adds — and
an edit anywhere is still seen (read whole again), never answered from stale knowledge."""

from __future__ import annotations

import pytest

from recap_memory import (
    Budget,
    Compactor,
    Conversation,
    InvalidHistoryError,
    Meter,
    Policy,
    Trigger,
)
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


# Conversation: O(new) without a look at the old messages, edits counted ----------------------


def test_an_unedited_conversation_is_trusted_without_a_look_at_its_old_messages():
    compactor = Compactor(policy=POLICY)
    history = Conversation([system("You help."), *turn(0), *turn(1)])
    assert compactor.compact_sync(history).messages is history  # nothing due: the same list
    big = tool("c0", "x" * 5_000, name="logs")
    list.__setitem__(history, 3, big)  # behind its back: nothing can see this...
    history.append(user("and now?"))
    assert not compactor.compact_sync(history).report.compacted  # ...so it was not looked at
    assert compactor.compact_sync(list(history)).report.compacted  # a plain list is compared


def test_an_edit_through_the_conversation_is_seen():
    compactor = Compactor(policy=POLICY)
    history = Conversation([system("You help."), *turn(0), *turn(1)])
    compactor.compact_sync(history)
    history[3] = tool("c0", "x" * 5_000, name="logs")  # now over the trigger
    result = compactor.compact_sync(history)
    assert result.report.compacted
    assert isinstance(result.messages, Conversation) and result.messages is not history


@pytest.mark.parametrize(
    ("edit", "counted"),
    [
        (lambda c: c.append(user("x")), False),
        (lambda c: c.extend([user("x")]), False),
        (lambda c: c.__iadd__([user("x")]), False),
        (lambda c: c.__setitem__(1, user("x")), True),
        (lambda c: c.__setitem__(slice(1, 2), [user("x")]), True),
        (lambda c: c.__delitem__(1), True),
        (lambda c: c.insert(1, user("x")), True),
        (lambda c: c.pop(), True),
        (lambda c: c.remove(c[1]), True),
        (lambda c: c.clear(), True),
        (lambda c: c.sort(key=lambda m: m.role), True),
        (lambda c: c.reverse(), True),
        (lambda c: c.__imul__(1), True),
    ],
)
def test_only_adding_at_the_end_is_not_an_edit(edit, counted):
    history = Conversation([system("You help."), *turn(0)])
    edit(history)
    assert (history.edits == 1) is counted


def test_turn_by_turn_a_conversation_answers_as_a_plain_list_does():
    conversation_engine, list_engine = Compactor(policy=POLICY), Compactor(policy=POLICY)
    history: Conversation = Conversation([system("You help.")])
    plain: list = [system("You help.")]
    for n in range(12):
        history.extend(turn(n))
        plain = plain + turn(n)
        mine, theirs = conversation_engine.compact_sync(history), list_engine.compact_sync(plain)
        assert list(mine.messages) == theirs.messages
        assert isinstance(mine.messages, Conversation)
        history, plain = mine.messages, theirs.messages
