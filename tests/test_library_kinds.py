"""The library takes what users hold and gives back the same kind: OpenAI dicts (clean,
ready for a provider), LangChain messages, recap messages; ``compact_sync`` works inside
a running event loop; a ``developer`` message is an instruction like ``system``."""

from __future__ import annotations

import asyncio

import pytest

from recap_memory import Budget, Compactor, InputError, Policy, Trigger, to_openai
from tests.test_compactor import agent_history

POLICY = Policy(trigger=Trigger(chars=2_000), keep=Budget(chars=400))


def openai_history() -> list[dict]:
    return [to_openai(m, recap_fields=False) for m in agent_history(6)]


def test_openai_dicts_in_clean_openai_dicts_out():
    history = openai_history()
    result = Compactor(policy=POLICY).compact_sync(history)
    assert result.report.compacted
    assert all(isinstance(m, dict) for m in result.messages)
    assert result.messages[0] == history[0], "the system prompt is untouched"
    assert result.messages[1]["role"] == "user"
    assert result.messages[1]["content"].startswith("[recap summary")
    assert not any({"id", "pinned"} & m.keys() for m in result.messages), "no recap-only keys"
    assert result.messages[-1] == history[-1]
    again = Compactor(policy=POLICY).compact_sync(result.messages + openai_history()[1:6])
    assert again.report.compacted and len(again.chain.rows) >= 1


def test_langchain_messages_in_langchain_messages_out():
    from langchain_core.messages import AIMessage, BaseMessage

    from recap_memory.adapters.langchain import to_langchain

    history = [to_langchain(m) for m in agent_history(6)]
    result = Compactor(policy=POLICY).compact_sync(history)
    assert result.report.compacted
    assert all(isinstance(m, BaseMessage) for m in result.messages)
    assert isinstance(result.messages[-1], AIMessage)


def test_a_mixed_list_is_refused_with_a_clear_error():
    mixed = [*openai_history()[:3], *agent_history(1)[3:]]
    with pytest.raises(InputError, match="give one kind"):
        Compactor(policy=POLICY).compact_sync(mixed)


def test_compact_sync_works_inside_a_running_event_loop():
    async def handler() -> bool:
        result = Compactor(policy=POLICY).compact_sync(openai_history())
        return result.report.compacted

    assert asyncio.run(handler())


def test_a_developer_message_is_kept_in_front_like_a_system_prompt():
    history = openai_history()
    history[0] = {"role": "developer", "content": "Answer tersely; cite log lines."}
    result = Compactor(policy=POLICY).compact_sync(history)
    assert result.report.compacted
    assert result.messages[0] == history[0], "kept as written, role included"
    assert result.messages[1]["content"].startswith("[recap summary")


# the summary's header: message numbers the model can read, exact ids in the result ----------


def _numbers(header_line: str) -> tuple[int, int]:
    covered = header_line.split("messages ", 1)[1].split(",")[0].rstrip("]")
    first, last = covered.split("–")
    return int(first), int(last)


def test_the_header_names_message_numbers_and_the_result_keeps_the_ids():
    from recap_memory.adapters.langchain import to_langchain

    history = [
        to_langchain(m.replace(id=f"lc_run--{n:04d}-6f651991-8c1d-4a7e-9b0f-01a22dc6e5f3-0"))
        for n, m in enumerate(agent_history(6))
    ]
    result = Compactor(policy=POLICY).compact_sync(history)
    header = str(result.messages[1].content).splitlines()[0]
    assert "lc_run" not in header and len(header) < 50, header
    row = result.chain.rows[0]
    assert (row.first, row.last) == (history[1].id, row.last) and str(row.last).startswith("lc_")
    first, last = _numbers(header)
    assert first == 2, "message 1 is the system prompt"
    assert history[last - 1].id == row.last, "the numbers count the conversation's messages"


@pytest.mark.parametrize("fresh_engine_each_turn", [False, True])
def test_rolling_numbers_count_every_message_of_the_conversation(fresh_engine_each_turn):
    compactor = Compactor(policy=POLICY)
    conversation = openai_history()
    view: list[dict] = conversation[:2]
    folds = 0
    for sent, message in enumerate(conversation[2:], start=3):
        engine = Compactor(policy=POLICY) if fresh_engine_each_turn else compactor
        result = engine.compact_sync([*view, message])
        view, folds = result.messages, folds + result.report.compacted
        if view[1]["content"].startswith("[recap summary"):
            first, last = _numbers(view[1]["content"].splitlines()[0])
            tail = view[2:]
            assert first == 2 and last + len(tail) == sent, "summary + tail = the whole record"
            assert tail == conversation[last:sent]
    assert folds >= 3, "a rolling chain, not one pass"
