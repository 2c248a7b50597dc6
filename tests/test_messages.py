"""The message model: lossless adapters and history validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recap_memory import InputError, InvalidHistoryError, from_openai, to_openai, validate_history
from recap_memory.messages import parse_messages
from tests.conftest import assistant, load_data, tool, user

pytestmark = pytest.mark.data


def test_openai_round_trip_is_lossless_on_real_agent_trajectories():
    for record in load_data("taubench_airline_dev.json"):
        for raw in record["traj"]:
            assert to_openai(from_openai(raw)) == raw
        validate_history(parse_messages(record["traj"]))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=5,
)


@settings(max_examples=200)
@given(
    content=st.none()
    | st.text()
    | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text()})),
    extra=st.dictionaries(st.sampled_from(["refusal", "audio", "x_vendor"]), json_values),
    reasoning=st.none() | st.text(),
    pinned=st.booleans(),
)
def test_round_trip_keeps_unknown_keys_reasoning_and_pins(content, extra, reasoning, pinned):
    raw = {"role": "assistant", "content": content, **extra}
    if reasoning is not None:
        raw["reasoning_content"] = reasoning
    if pinned:
        raw["pinned"] = True
    raw["tool_calls"] = [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    ]
    assert to_openai(from_openai(raw)) == raw


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"role": "robot", "content": "x"}, "unknown role 'robot'"),
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        ({"role": "user", "content": 5}, "'content' must be"),
        ({"role": "user", "tool_calls": [{}], "content": "x"}, "only assistant"),
        ("hello", "must be a JSON object"),
    ],
)
def test_malformed_messages_name_the_problem(raw, fragment):
    with pytest.raises(InputError, match="message 0") as info:
        parse_messages([raw])
    assert fragment in str(info.value)


def test_orphan_tool_result_and_unanswered_call_are_invalid():
    with pytest.raises(InvalidHistoryError, match="no assistant tool call"):
        validate_history([user("hi"), tool("c1", "result")])
    with pytest.raises(InvalidHistoryError, match="have no result"):
        validate_history(
            [user("hi"), assistant(calls=[("c1", "f"), ("c2", "g")]), tool("c1", "r"), user("next")]
        )
    with pytest.raises(InvalidHistoryError, match="answers no call"):
        validate_history([user("hi"), assistant(calls=[("c1", "f")]), tool("c9", "r")])


def test_parallel_results_in_any_order_and_a_pending_last_call_are_valid():
    validate_history(
        [user("hi"), assistant(calls=[("c1", "f"), ("c2", "g")]), tool("c2", "r"), tool("c1", "r")]
    )
    validate_history([user("hi"), assistant(calls=[("c1", "f")])])
