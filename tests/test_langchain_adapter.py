"""LangChain messages convert to recap messages and back without loss."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from recap_memory import Budget, Compactor, Policy, Trigger, validate_history
from recap_memory.adapters.langchain import from_langchain, to_langchain


def _conversation():
    return [
        SystemMessage("You are terse.", id="s"),
        HumanMessage("Find flights", id="h1", additional_kwargs={"pinned": True}),
        AIMessage(
            "",
            id="a1",
            tool_calls=[
                {"id": "c1", "name": "search", "args": {"origin": "JFK"}, "type": "tool_call"},
                {"id": "c2", "name": "search", "args": {"origin": "EWR"}, "type": "tool_call"},
            ],
            additional_kwargs={"reasoning_content": "two airports"},
            response_metadata={"model_name": "m"},
        ),
        ToolMessage("HAT069 06:00", tool_call_id="c1", id="t1", name="search"),
        ToolMessage("HAT170 07:30", tool_call_id="c2", id="t2", name="search", status="error"),
        AIMessage("HAT069 leaves at 06:00.", id="a2"),
    ]


def test_round_trip_is_lossless():
    for message in _conversation():
        assert to_langchain(from_langchain(message)) == message


def test_parallel_tool_calls_and_pins_are_understood():
    converted = [from_langchain(m) for m in _conversation()]
    validate_history(converted)
    assert converted[1].pinned
    assert [c.id for c in converted[2].tool_calls] == ["c1", "c2"]
    assert converted[2].reasoning == "two airports"


def test_compacting_langchain_messages_keeps_ids_for_removal():
    history = _conversation()
    for n in range(6):
        history += [
            HumanMessage(f"question {n} about route R{n}", id=f"q{n}"),
            AIMessage(f"answer {n}: route R{n} has {n + 2} daily flights", id=f"r{n}"),
        ]
    policy = Policy(trigger=Trigger(chars=200), keep=Budget(chars=120))
    result = Compactor(policy=policy).compact_sync([from_langchain(m) for m in history])
    assert result.report.compacted
    first, last = result.report.covered_ids
    assert isinstance(first, str) and isinstance(last, str)
    out = [to_langchain(m) for m in result.messages]
    assert out[0] == history[0]
    assert history[1] in out  # pinned human message carried verbatim
