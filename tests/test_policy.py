"""The policy's derived figures: the per-turn gate and the summary size cap."""

from __future__ import annotations

from recap_memory.counting import Size
from recap_memory.policy import Budget, Policy, Trigger


def test_the_gate_needs_the_trigger_and_enough_new_messages() -> None:
    policy = Policy(trigger=Trigger(chars=1_000), keep=Budget(chars=400), min_new_messages=3)
    assert not policy.is_due(Size(900, 200, 10), new_messages=5)
    assert not policy.is_due(Size(1_200, 300, 10), new_messages=2)
    assert policy.is_due(Size(1_200, 300, 10), new_messages=3)
    assert not policy.model_copy(update={"enabled": False}).is_due(Size(9_999, 1, 1), 9)
    assert not Policy().is_due(Size(99_999, 1, 1), new_messages=0), "nothing new: not due"


def test_a_default_summary_cap_leaves_room_under_the_trigger() -> None:
    assert Policy().summary_chars() == 26_666  # 60k trigger, 20k kept: two thirds of the room
    assert Policy(trigger=Trigger(chars=2_000), keep=Budget(chars=600)).summary_chars() == 933
    tokens = Policy(trigger=Trigger(tokens=1_000), keep=Budget(tokens=600))
    assert tokens.summary_chars() == 1_064  # 266 of 400 tokens of room, 4 chars a token
    assert Policy(trigger=Trigger(chars=1_000), keep=Budget(chars=900)).summary_chars() == 200


def test_an_explicit_summary_cap_is_kept_as_set() -> None:
    policy = Policy(
        trigger=Trigger(chars=300), keep=Budget(chars=120), summary_max=Budget(chars=400)
    )
    assert policy.summary_chars() == 400
    assert Policy(summary_max=Budget(tokens=100)).summary_chars() == 400
    forced = Policy(trigger=Trigger(chars=2_000), keep=Budget(chars=600)).forced()
    assert forced.trigger.fires(Size(1, 1, 2)) and forced.min_new_messages == 0
    assert forced.summary_chars() == 933, "compacting by hand leaves the same room"
