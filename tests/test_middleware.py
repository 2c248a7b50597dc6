"""RecapMiddleware inside LangChain v1's real ``create_agent``: sync ``invoke`` and async
``ainvoke``, in memory, SQLite and PostgreSQL checkpoints, 40+ turns with parallel tool
calls; the history stays valid and bounded, and the summary keeps the opening facts."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from examples.incident_agent.agent import TOOLS, scripted_model
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from recap_memory import Budget, Policy, Trigger
from recap_memory.adapters.langchain import from_langchain
from recap_memory.integrations.middleware import RecapMiddleware
from recap_memory.messages import validate_history

POLICY = Policy(trigger=Trigger(chars=12_000), keep=Budget(chars=5_000))
TURNS = 42
OPENING = "Question 0: the customer is Priya Raman, order A-55102. What is failing?"


def question(n: int) -> HumanMessage:
    return HumanMessage(OPENING if n == 0 else f"Question {n}: what is failing now?")


def agent_with(checkpointer: Any, events: list[dict[str, Any]]) -> Any:
    async def sink(event: dict[str, Any]) -> None:
        events.append(event)

    middleware = RecapMiddleware(policy=POLICY, sink=sink)
    return create_agent(scripted_model(), TOOLS, middleware=[middleware], checkpointer=checkpointer)


def check(messages: list[Any], events: list[dict[str, Any]]) -> None:
    validate_history([from_langchain(m) for m in messages])
    summary = next(m for m in messages if str(m.content).startswith("[recap summary"))
    assert "Priya Raman" in str(summary.content) and "A-55102" in str(summary.content)
    assert sum(len(str(m.content)) for m in messages) < 2 * POLICY.trigger.chars
    passes = [e for e in events if e["summarization"] and e["compacted"]]
    assert len(passes) >= 5 and all(e["messages_removed"] > 0 for e in passes)


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_sync_invoke_over_many_turns(saver: str, tmp_path: Path) -> None:
    checkpointer = (
        InMemorySaver()
        if saver == "memory"
        else SqliteSaver(sqlite3.connect(tmp_path / "agent.db", check_same_thread=False))
    )
    events: list[dict[str, Any]] = []
    agent = agent_with(checkpointer, events)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    for n in range(TURNS):
        agent.invoke({"messages": [question(n)]}, config)
    check(list(agent.get_state(config).values["messages"]), events)


@pytest.mark.parametrize("saver", ["memory", "sqlite", "postgres"])
async def test_async_ainvoke_over_many_turns(saver: str, tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}

    async def run(checkpointer: Any) -> list[Any]:
        agent = agent_with(checkpointer, events)
        for n in range(TURNS):
            await agent.ainvoke({"messages": [question(n)]}, config)
        return list((await agent.aget_state(config)).values["messages"])

    if saver == "memory":
        messages = await run(InMemorySaver())
    elif saver == "sqlite":
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "agent.db")) as checkpointer:
            messages = await run(checkpointer)
    else:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        from tests.test_langgraph import POSTGRES

        async with AsyncPostgresSaver.from_conn_string(POSTGRES) as checkpointer:
            await checkpointer.setup()
            messages = await run(checkpointer)
    check(messages, events)
