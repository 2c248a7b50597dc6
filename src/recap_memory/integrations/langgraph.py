"""LangGraph integration: Design A's ``maybe_summarize`` on a real checkpointed agent.

Two lines in an existing chat loop, before each agent call::

    from recap_memory.integrations.langgraph import maybe_summarize
    await maybe_summarize(agent, config)          # then: await agent.ainvoke(..., config)

It reads the thread's messages (``agent.aget_state``), applies the policy
(``SUMMARIZATION_*`` settings by default), and when due rewrites the
checkpoint (``agent.aupdate_state``) so it holds the system prompt, ONE
``HumanMessage`` with the summary, and the kept turns verbatim. The summary
takes the place (and id) of the first removed message and ``RemoveMessage``
removes the others; when that cannot express the new history (messages
without ids, masked tool outputs), the whole list is replaced at once. A tool
call is never separated from its results (the engine's planner guarantees it).

Inside a graph, :func:`summarization_node` is the same pass as a node or a
``pre_model_hook`` of ``create_react_agent``. Needs ``pip install recap-memory[langgraph]``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableLambda
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from recap_memory.compactor import CompactionResult, Report
from recap_memory.configured import configured_compactor
from recap_memory.llm.base import ChatModel
from recap_memory.llm.langchain import LangChainModel
from recap_memory.policy import Policy
from recap_memory.settings import LLMSettings, SummarizationSettings, load_settings
from recap_memory.sync import run_sync

log = logging.getLogger("recap_memory.langgraph")

UsageSink = Callable[[dict[str, Any]], Awaitable[None]]
"""Receives one usage event per pass (the report plus thread and request ids)."""


@dataclass(frozen=True)
class SummarizeResult:
    """What one pass did: compacted or not, why, counts, timings."""

    compacted: bool
    reason: str | None
    path: str
    messages_before: int = 0
    messages_after: int = 0
    chars_before: int = 0
    chars_after: int = 0
    elapsed_ms: float = 0.0
    report: Report | None = None


class Summarization:
    """A configured pass, built once and run at every turn (or as a graph node).

    ``model``: a recap :class:`~recap_memory.llm.base.ChatModel`, a LangChain chat model
    (Design A summarizes with the agent's own model), or None for the model the
    settings name (``RECAP_LLM`` / ``UTILITY_MODEL``; extractive when none).
    ``fallback``: ``"extractive"`` compacts when the model fails, ``"none"`` leaves
    the turn unchanged (Design A); default from ``RECAP_FALLBACK``.
    ``sink``: where usage events go (e.g. the recap store), besides the log.
    """

    def __init__(
        self,
        *,
        settings: SummarizationSettings | None = None,
        policy: Policy | None = None,
        model: ChatModel | Any | None = None,
        fallback: Literal["extractive", "none"] | None = None,
        sink: UsageSink | None = None,
        as_node: str | None = None,
    ) -> None:
        settings = settings or load_settings(SummarizationSettings)
        self.policy = policy or settings.policy()
        llm_settings = load_settings(LLMSettings, {"fallback": fallback} if fallback else None)
        if model is not None and not isinstance(model, ChatModel):
            model = LangChainModel(model)  # the agent's own LangChain chat model
        self.compactor = configured_compactor(
            self.policy, llm_settings, model=model, strategy=settings.strategy
        )
        self.sink = sink
        self.as_node = as_node

    async def run(
        self, agent: Any, config: Mapping[str, Any], *, request_id: str | None = None
    ) -> SummarizeResult:
        """Compact the thread's checkpoint when due (see the module docstring)."""
        started = time.perf_counter()
        if not self.policy.enabled:
            return SummarizeResult(False, "disabled", "skipped")
        request_id = request_id or uuid.uuid4().hex[:8]
        state = await agent.aget_state(config)
        messages = list((state.values or {}).get("messages") or [])
        update, result = await self.plan(messages, request_id=request_id, config=config)
        if update is None:
            return _timed(result, started)
        try:
            await agent.aupdate_state(config, {"messages": update}, as_node=self.as_node)
        except Exception as exc:
            log.error(
                "[%s] could not write the summary to the checkpoint, turn goes on unchanged: %r",
                request_id, exc, exc_info=True,
            )  # fmt: skip
            unchanged = replace(
                result,
                compacted=False,
                reason=f"state update failed: {type(exc).__name__}: {exc}",
                path="rejected",
                messages_after=result.messages_before,
                chars_after=result.chars_before,
            )
            return _timed(unchanged, started)
        return _timed(result, started)

    def run_sync(
        self, agent: Any, config: Mapping[str, Any], *, request_id: str | None = None
    ) -> SummarizeResult:
        """:meth:`run` for a graph used synchronously (``agent.invoke``, a sync
        checkpointer): reads and writes the state with ``get_state``/``update_state``."""
        return run_sync(self.run(_SyncGraph(agent), config, request_id=request_id))

    async def plan(
        self,
        messages: Sequence[BaseMessage],
        *,
        request_id: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> tuple[list[BaseMessage] | None, SummarizeResult]:
        """The ``messages`` update that compacts ``messages`` (None when nothing is due)."""
        if not self.policy.enabled:
            return None, SummarizeResult(False, "disabled", "skipped")
        outcome = await self.compactor.compact(messages, request_id=request_id)
        await self._record(outcome.report, request_id, config)
        return _planned(messages, outcome)

    def plan_sync(
        self,
        messages: Sequence[BaseMessage],
        *,
        request_id: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> tuple[list[BaseMessage] | None, SummarizeResult]:
        """:meth:`plan` for synchronous code; a turn with nothing due and no usage sink to
        tell is answered without an event loop."""
        if self.sink is None and (quick := self.compactor.answer_if_not_due(messages)):
            return _planned(messages, quick)
        return run_sync(self.plan(messages, request_id=request_id, config=config))

    async def _record(
        self, report: Report, request_id: str | None, config: Mapping[str, Any] | None
    ) -> None:
        if self.sink is None:
            return
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        event = {
            "kind": "compaction",
            "summarization": True,
            "thread_id": thread,
            "request_id": request_id,
            **report.as_dict(),
        }
        try:
            await self.sink(event)
        except Exception as exc:  # recording must never break the turn
            log.warning("[%s] could not record the usage event: %r", request_id, exc)


async def maybe_summarize(
    agent: Any,
    config: Mapping[str, Any],
    *,
    settings: SummarizationSettings | None = None,
    policy: Policy | None = None,
    model: ChatModel | Any | None = None,
    fallback: Literal["extractive", "none"] | None = None,
    sink: UsageSink | None = None,
    request_id: str | None = None,
) -> SummarizeResult:
    """Design A's pre-call pass: compact ``agent``'s checkpoint for ``config`` when due.

    Never raises for a model or state failure: it logs and the turn goes on
    with the checkpoint unchanged. With ``enabled`` off it returns at once,
    reading nothing and calling no model. Build a :class:`Summarization` once
    to reuse its configuration across turns.
    """
    summarization = Summarization(
        settings=settings, policy=policy, model=model, fallback=fallback, sink=sink
    )
    return await summarization.run(agent, config, request_id=request_id)


def maybe_summarize_sync(
    agent: Any,
    config: Mapping[str, Any],
    *,
    settings: SummarizationSettings | None = None,
    policy: Policy | None = None,
    model: ChatModel | Any | None = None,
    fallback: Literal["extractive", "none"] | None = None,
    sink: UsageSink | None = None,
    request_id: str | None = None,
) -> SummarizeResult:
    """:func:`maybe_summarize` for a graph used synchronously (``agent.invoke``)."""
    summarization = Summarization(
        settings=settings, policy=policy, model=model, fallback=fallback, sink=sink
    )
    return summarization.run_sync(agent, config, request_id=request_id)


def summarization_node(summarization: Summarization | None = None) -> Any:
    """The pass as a graph node or ``create_react_agent(pre_model_hook=...)``, usable with
    ``invoke`` and ``ainvoke`` alike (a ``RunnableLambda`` with both): it returns the
    ``messages`` update that compacts the state, or no update when nothing is due."""
    configured = summarization or Summarization()

    async def summarize(state: Mapping[str, Any]) -> dict[str, Any]:
        update, _ = await configured.plan(state_messages(state))
        return {"messages": update} if update is not None else {}

    def summarize_sync(state: Mapping[str, Any]) -> dict[str, Any]:
        update, _ = configured.plan_sync(state_messages(state))
        return {"messages": update} if update is not None else {}

    return RunnableLambda(summarize_sync, afunc=summarize, name="recap_summarization")


def state_messages(state: Mapping[str, Any]) -> Sequence[BaseMessage]:
    """A graph state's messages as they are (a list is not copied: the engine only reads)."""
    messages = state.get("messages") or []
    return messages if isinstance(messages, list) else list(messages)


class _SyncGraph:
    """A graph's synchronous state methods, as the async ones :meth:`Summarization.run`
    calls (run on a private event loop, so blocking is fine)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    async def aget_state(self, config: Mapping[str, Any]) -> Any:
        return self.agent.get_state(config)

    async def aupdate_state(self, config: Mapping[str, Any], values: Any, **kw: Any) -> Any:
        return self.agent.update_state(config, values, **kw)


def _planned(
    messages: Sequence[BaseMessage], outcome: CompactionResult[Any]
) -> tuple[list[BaseMessage] | None, SummarizeResult]:
    """The update (None when the pass changed nothing) and the result of one pass."""
    report = outcome.report
    result = SummarizeResult(
        report.compacted,
        report.reason,
        report.path,
        len(messages),
        len(outcome.messages),
        report.size_before.chars,
        report.size_after.chars,
        report.elapsed_ms,
        report,
    )
    if not report.compacted:
        return None, result
    return _messages_update(list(messages), list(outcome.messages)), result


def _messages_update(old: list[BaseMessage], new: list[BaseMessage]) -> list[BaseMessage]:
    """Updates for the ``add_messages`` reducer that turn ``old`` into ``new``.

    Preferred: the summary reuses the first removed message's id (so it lands in
    that place), changed messages are replaced by id, the rest are removed by id.
    The result is checked by running the reducer; if it would not give ``new``
    exactly, the whole list is replaced (``REMOVE_ALL_MESSAGES``).
    """
    by_id = {m.id: m for m in old if m.id}
    kept = {m.id for m in new if m.id in by_id}
    removed = [m.id for m in old if m.id and m.id not in kept]
    fresh = [i for i, m in enumerate(new) if m.id not in by_id]
    if len(by_id) == len(old) and len(fresh) == 1 and removed:
        target = list(new)
        target[fresh[0]] = new[fresh[0]].model_copy(update={"id": removed[0]})
        changed = [m for m in target if m.id in kept and m != by_id[m.id]]
        update: list[BaseMessage] = [
            target[fresh[0]],
            *changed,
            *(RemoveMessage(id=i) for i in removed[1:] if i is not None),
        ]
        merged: Any = add_messages(list[Any](old), list[Any](update))
        if _same(merged, target):
            return update
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *new]


def _same(left: Sequence[BaseMessage], right: Sequence[BaseMessage]) -> bool:
    return [(m.id, m.type, m.content) for m in left] == [(m.id, m.type, m.content) for m in right]


def _timed(result: SummarizeResult, started: float) -> SummarizeResult:
    return replace(result, elapsed_ms=round((time.perf_counter() - started) * 1000, 3))
