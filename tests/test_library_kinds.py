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
