"""An incident-investigation agent that runs offline, with recap compacting its history.

A real LangGraph graph (agent node + ToolNode, three tools returning large log
and metric dumps) checkpointed in SQLite, driven by a scripted chat model that
checks every history it receives as a provider would (no orphan tool result,
no unanswered call) and answers each question with two parallel tool calls.
Before every turn, ``maybe_summarize`` compacts the checkpoint when it grows
past the threshold.

    python examples/incident_agent/agent.py [--turns 8] [--db out/incident_agent.db]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from recap_memory.adapters.langchain import from_langchain
from recap_memory.integrations.scripted import ScriptedChatModel
from recap_memory.messages import validate_history


@tool
def fetch_logs(service: str) -> str:
    """The recent error log of a service."""
    return "\n".join(
        f"2026-11-28T14:{m:02d}:07Z {service} ERROR upstream=payments-db "
        f"request_id=r{m * 37:05d} pool_wait_ms={900 + m * 13} shard={m % 5}"
        for m in range(30)
    )


@tool
def fetch_metrics(service: str) -> str:
    """Latency and saturation metrics of a service."""
    return "\n".join(
        f"{service} p99_ms={400 + k * 31} pool_in_use={k % 50}/50 cpu={k % 90}% minute={k}"
        for k in range(25)
    )


@tool
def fetch_deploys(service: str) -> str:
    """Recent deploys of a service."""
    return f"14:08 {service} v2.31.0 (db pool 50 -> 5)\n13:02 {service} v2.30.4 (no config change)"


TOOLS = [fetch_logs, fetch_metrics, fetch_deploys]


def investigate(messages: list[BaseMessage]) -> AIMessage:
    """The scripted agent: a question gets two parallel tool calls, results get a finding."""
    validate_history([from_langchain(m) for m in messages], allow_pending=False)
    last = messages[-1]
    asked = next(str(m.content) for m in reversed(messages) if m.type == "human")
    turn = int(match.group(1)) if (match := re.search(r"Question (\d+)", asked)) else 0
    if isinstance(last, ToolMessage):
        return AIMessage(f"Finding {turn}: pool saturation on payments-db shard {turn % 5}.")
    return AIMessage(
        "",
        tool_calls=[
            {"name": "fetch_logs", "args": {"service": "checkout"}, "id": f"logs-{len(messages)}"},
            {
                "name": "fetch_metrics",
                "args": {"service": "payments"},
                "id": f"metrics-{len(messages)}",
            },
        ],
    )


def scripted_model() -> ScriptedChatModel:
    return ScriptedChatModel(default=investigate)


def build_agent(checkpointer: Any, model: ScriptedChatModel | None = None) -> Any:
    """agent → tools → agent … until an answer without tool calls."""
    chat = model or scripted_model()

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await chat.ainvoke(state["messages"])]}

    def agent_sync(state: MessagesState) -> dict[str, Any]:
        return {"messages": [chat.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(agent_sync, afunc=agent))  # invoke and ainvoke
    graph.add_node("tools", ToolNode(TOOLS))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


SYSTEM_PROMPT = "You investigate incidents. Quote the exact log lines you rely on."


async def main(turns: int, db: str) -> None:
    """Run ``turns`` questions on one thread, compacting before each, then print the checkpoint."""
    from langchain_core.messages import HumanMessage, SystemMessage
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from recap_memory import Budget, Policy, Trigger
    from recap_memory.integrations.langgraph import maybe_summarize

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    policy = Policy(trigger=Trigger(chars=12_000), keep=Budget(chars=5_000))
    config = {"configurable": {"thread_id": f"incident-{uuid.uuid4().hex[:6]}"}}
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        agent = build_agent(saver)
        for n in range(turns):
            result = await maybe_summarize(agent, config, policy=policy, request_id=f"turn-{n}")
            print(f"turn {n}: compacted={result.compacted} ({result.reason or result.path}), "
                  f"{result.chars_before} -> {result.chars_after} chars")  # fmt: skip
            first = [SystemMessage(SYSTEM_PROMPT)] if n == 0 else []
            question = HumanMessage(f"Question {n}: what is failing in checkout now?")
            await agent.ainvoke({"messages": [*first, question]}, config)
        state = await agent.aget_state(config)
    print("\nfinal checkpoint:")
    for message in state.values["messages"]:
        text = str(message.content).replace("\n", " ")
        calls = ", ".join(c["name"] for c in getattr(message, "tool_calls", []))
        print(f"  {message.type:>6}  {len(text):>5} chars  {calls or text[:70]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Run the offline incident agent with recap.")
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--db", default="out/incident_agent.db")
    args = parser.parse_args()
    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(args.turns, args.db))
