"""``maybe_summarize`` and the summarization node on real LangGraph graphs with real
checkpointers: in memory, SQLite, and this machine's PostgreSQL."""

from __future__ import annotations

import logging
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from examples.incident_agent.agent import TOOLS, build_agent, scripted_model
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.prebuilt import create_react_agent

from recap_memory import BackendError, Budget, Policy, Trigger
from recap_memory.adapters.langchain import from_langchain
from recap_memory.integrations.langgraph import (
    Summarization,
    _messages_update,
    maybe_summarize,
    maybe_summarize_sync,
    summarization_node,
)
from recap_memory.llm import FakeModel
from recap_memory.messages import validate_history
from tests.conftest import CLEAN_ENV, ROOT

POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
POLICY = Policy(trigger=Trigger(chars=9_000), keep=Budget(chars=4_000))
SYSTEM = SystemMessage("You investigate incidents. Quote exact log lines.")
SUMMARY = "**Investigating:** checkout errors.\n**Key findings:**\n- payments-db pool saturated"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def checkpointer(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
    elif request.param == "sqlite":
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "checkpoints.db")) as saver:
            yield saver
    else:
        async with AsyncPostgresSaver.from_conn_string(POSTGRES) as saver:
            await saver.setup()
            yield saver


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"test-{uuid.uuid4()}"}}


async def turn(agent: Any, config: dict[str, Any], n: int) -> None:
    first = [SYSTEM] if n == 0 else []
    await agent.ainvoke({"messages": [*first, HumanMessage(f"Question {n}: why?")]}, config)


async def messages(agent: Any, config: dict[str, Any]) -> list[Any]:
    return list((await agent.aget_state(config)).values["messages"])


async def test_the_checkpoint_holds_system_summary_and_kept_turns_only(checkpointer):
    agent, config = build_agent(checkpointer), thread()
    summarizer = FakeModel(default=SUMMARY)
    record: list[str] = []  # every message id the thread ever held, in order
    results = []
    for n in range(6):
        results.append(await maybe_summarize(agent, config, policy=POLICY, model=summarizer))
        await turn(agent, config, n)
        record += [m.id for m in await messages(agent, config) if m.id not in record]

    assert any(r.compacted for r in results)
    final = await messages(agent, config)
    assert final[0] == SYSTEM.model_copy(update={"id": final[0].id})  # untouched, first
    assert isinstance(final[1], HumanMessage)
    assert final[1].content.startswith("[recap summary") and SUMMARY in final[1].content
    tail = [m.id for m in final[2:]]
    assert tail == record[-len(tail) :]  # the kept turns, verbatim and contiguous
    assert not any(m.content.startswith("[recap summary") for m in final[2:])
    validate_history([from_langchain(m) for m in final])

    await turn(agent, config, 6)  # the graph keeps running: tool calls on the new history
    after = await messages(agent, config)
    assert isinstance(after[-1], AIMessage) and after[-1].content.startswith("Finding")
    assert sum(1 for m in after if m.type == "tool") >= 2


async def test_compaction_result_reports_counts_and_timing():
    agent, config = build_agent(InMemorySaver()), thread()
    for n in range(4):
        await turn(agent, config, n)
    result = await maybe_summarize(agent, config, policy=POLICY, model=FakeModel(default=SUMMARY))
    assert result.compacted and result.path == "summarized"
    assert result.messages_after < result.messages_before
    assert result.chars_after < result.chars_before
    assert result.elapsed_ms > 0 and result.report is not None
    assert len(await messages(agent, config)) == result.messages_after


async def test_parallel_tool_calls_at_the_cut_stay_together():
    agent, config = build_agent(InMemorySaver()), thread()
    for n in range(5):
        await turn(agent, config, n)
    for keep in range(500, 6_000, 500):  # many cut positions
        policy = Policy(trigger=Trigger(chars=keep + 1_000), keep=Budget(chars=keep))
        await maybe_summarize(agent, config, policy=policy, model=FakeModel(default=SUMMARY))
        current = await messages(agent, config)
        validate_history([from_langchain(m) for m in current])
        for i, m in enumerate(current):
            if isinstance(m, AIMessage) and m.tool_calls:
                results = {t.tool_call_id for t in current[i + 1 : i + 3]}
                assert results == {c["id"] for c in m.tool_calls}


async def test_a_failing_model_leaves_the_turn_unchanged_without_fallback(caplog):
    agent, config = build_agent(InMemorySaver()), thread()
    for n in range(4):
        await turn(agent, config, n)
    before = await messages(agent, config)
    failing = FakeModel(default=BackendError("model down", kind="connection"))
    with caplog.at_level(logging.WARNING, logger="recap_memory"):
        result = await maybe_summarize(
            agent, config, policy=POLICY, model=failing, fallback="none", request_id="req-7"
        )
    assert not result.compacted and result.path == "rejected"
    assert await messages(agent, config) == before
    assert any("[req-7]" in r.message and r.levelname == "WARNING" for r in caplog.records)
    await turn(agent, config, 4)  # the turn goes on


async def test_a_failing_model_falls_back_to_extractive_by_default():
    agent, config = build_agent(InMemorySaver()), thread()
    for n in range(4):
        await turn(agent, config, n)
    failing = FakeModel(default=BackendError("model down", kind="connection"))
    result = await maybe_summarize(agent, config, policy=POLICY, model=failing)
    assert result.compacted and result.path == "fallback"
    assert (await messages(agent, config))[1].content.startswith("[recap summary")


class FailingUpdates:
    """The agent, except that writing state fails."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    async def aget_state(self, config: Any) -> Any:
        return await self.agent.aget_state(config)

    async def aupdate_state(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("checkpoint database went away")


async def test_a_failing_state_update_is_logged_and_the_turn_goes_on(caplog):
    agent, config = build_agent(InMemorySaver()), thread()
    for n in range(4):
        await turn(agent, config, n)
    before = await messages(agent, config)
    with caplog.at_level(logging.ERROR, logger="recap_memory"):
        result = await maybe_summarize(
            FailingUpdates(agent), config, policy=POLICY, model=FakeModel(default=SUMMARY)
        )
    assert not result.compacted and "state update failed" in (result.reason or "")
    assert any(r.levelname == "ERROR" for r in caplog.records)
    assert await messages(agent, config) == before
    await turn(agent, config, 4)


class CountingAgent(FailingUpdates):
    def __init__(self, agent: Any) -> None:
        super().__init__(agent)
        self.reads = 0

    async def aget_state(self, config: Any) -> Any:
        self.reads += 1
        return await self.agent.aget_state(config)


async def test_disabled_returns_at_once_without_reading_or_calling_a_model():
    agent = CountingAgent(build_agent(InMemorySaver()))
    model = FakeModel(default=SUMMARY)
    disabled = POLICY.model_copy(update={"enabled": False})
    result = await maybe_summarize(agent, thread(), policy=disabled, model=model)
    assert (result.compacted, result.reason) == (False, "disabled")
    assert agent.reads == 0 and model.calls == []


async def test_each_pass_is_recorded_as_a_usage_event():
    agent, config = build_agent(InMemorySaver()), thread()
    for n in range(4):
        await turn(agent, config, n)
    events: list[dict[str, Any]] = []

    async def sink(event: dict[str, Any]) -> None:
        events.append(event)

    summarization = Summarization(policy=POLICY, model=FakeModel(default=SUMMARY), sink=sink)
    await summarization.run(agent, config, request_id="req-1")
    await summarization.run(agent, config, request_id="req-2")  # nothing due now
    assert [e["request_id"] for e in events] == ["req-1", "req-2"]
    assert events[0]["summarization"] is True and events[0]["messages_removed"] > 0
    assert events[0]["thread_id"] == config["configurable"]["thread_id"]
    assert events[0]["usage"][0]["model"] == "fake"
    assert events[1]["compacted"] is False


async def test_the_agents_own_langchain_model_can_write_the_summary():
    agent, config = build_agent(InMemorySaver()), thread()
    for n in range(4):
        await turn(agent, config, n)
    own = scripted_model()
    own.replies.append("The user asked why checkout fails; payments-db pool is saturated.")
    result = await maybe_summarize(agent, config, policy=POLICY, model=own)
    assert result.path == "summarized"
    assert "payments-db pool is saturated" in (await messages(agent, config))[1].content


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # create_react_agent moved in v1
async def test_the_node_form_runs_inside_create_react_agent():
    node = summarization_node(Summarization(policy=POLICY, model=FakeModel(default=SUMMARY)))
    agent = create_react_agent(
        scripted_model(), TOOLS, pre_model_hook=node, checkpointer=InMemorySaver()
    )
    config = thread()
    for n in range(6):
        await turn(agent, config, n)
    final = await messages(agent, config)
    assert final[0].type == "system"
    assert final[1].content.startswith("[recap summary")
    validate_history([from_langchain(m) for m in final])
    assert sum(len(str(m.content)) for m in final) < 2 * POLICY.trigger.chars  # bounded


def test_messages_without_ids_are_replaced_as_a_whole():
    old = [SYSTEM, HumanMessage("a"), AIMessage("b"), HumanMessage("c"), AIMessage("d")]
    new = [SYSTEM, HumanMessage("[recap summary of messages 1–2]\nsummary"), *old[3:]]
    update = _messages_update(old, new)
    assert isinstance(update[0], RemoveMessage) and update[0].id == REMOVE_ALL_MESSAGES
    merged = add_messages(old, update)
    assert [m.content for m in merged] == [m.content for m in new]


def test_messages_with_ids_are_removed_by_id_and_the_summary_takes_the_first_place():
    old = add_messages([], [SYSTEM, HumanMessage("a"), AIMessage("b"), HumanMessage("c")])
    new = [old[0], HumanMessage("[recap summary of messages 1–2]\nsummary"), old[3]]
    update = _messages_update(list(old), new)
    assert not any(getattr(m, "id", None) == REMOVE_ALL_MESSAGES for m in update)
    assert [type(m).__name__ for m in update] == ["HumanMessage", "RemoveMessage"]
    assert update[0].id == old[1].id and update[1].id == old[2].id
    merged = add_messages(list(old), update)
    assert [m.content for m in merged] == [m.content for m in new]


def test_the_example_agent_runs_offline_and_compacts(tmp_path: Path):
    script = ROOT / "examples" / "incident_agent" / "agent.py"
    run = subprocess.run(
        [sys.executable, str(script), "--turns", "6", "--db", str(tmp_path / "agent.db")],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=CLEAN_ENV,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "compacted=True" in run.stdout
    assert "[turn-3] summarizer: session=" in run.stderr  # Design A's log line, request id
    checkpoint = run.stdout.split("final checkpoint:")[1].split("\n")
    assert checkpoint[1].split()[0] == "system" and "[recap summary" in checkpoint[2]


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_a_graph_used_synchronously_is_compacted_by_the_sync_twin(saver: str, tmp_path: Path):
    """``agent.invoke`` with a sync checkpointer: ``maybe_summarize_sync`` reads and writes
    the state with ``get_state``/``update_state``; it also works inside a running loop."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    checkpointer = (
        InMemorySaver()
        if saver == "memory"
        else SqliteSaver(sqlite3.connect(tmp_path / "sync.db", check_same_thread=False))
    )
    agent, config = build_agent(checkpointer), thread()
    results = []
    for n in range(6):
        results.append(
            maybe_summarize_sync(agent, config, policy=POLICY, model=FakeModel(default=SUMMARY))
        )
        first = [SYSTEM] if n == 0 else []
        agent.invoke({"messages": [*first, HumanMessage(f"Question {n}: why?")]}, config)
    assert any(r.compacted for r in results)
    final = list(agent.get_state(config).values["messages"])
    assert final[1].content.startswith("[recap summary")
    validate_history([from_langchain(m) for m in final])


def test_the_node_form_runs_with_a_sync_invoke():
    node = summarization_node(Summarization(policy=POLICY, model=FakeModel(default=SUMMARY)))
    agent = create_react_agent(
        scripted_model(), TOOLS, pre_model_hook=node, checkpointer=InMemorySaver()
    )
    config = thread()
    for n in range(6):
        first = [SYSTEM] if n == 0 else []
        agent.invoke({"messages": [*first, HumanMessage(f"Question {n}: why?")]}, config)
    final = list(agent.get_state(config).values["messages"])
    assert final[1].content.startswith("[recap summary")
    validate_history([from_langchain(m) for m in final])
