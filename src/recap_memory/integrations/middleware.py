"""recap as LangChain v1 agent middleware: ``create_agent(model, tools, middleware=[...])``.

    from langchain.agents import create_agent
    from recap_memory.integrations.middleware import RecapMiddleware

    agent = create_agent(model, tools, middleware=[RecapMiddleware()], checkpointer=saver)

Before every model call (``before_model`` for ``invoke``, ``abefore_model`` for
``ainvoke``) the agent's messages are compacted when the policy says so: the same
engine, settings (``SUMMARIZATION_*``, ``RECAP_*``), usage events and failure
behaviour as :func:`recap_memory.integrations.langgraph.maybe_summarize` — a tool
call and its results are never split, a failed summary leaves the turn unchanged.
Needs the ``langchain`` extra (``pip install 'recap-memory[langchain]'``).
"""

from __future__ import annotations

from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware, AgentState

from recap_memory.integrations.langgraph import Summarization, UsageSink, state_messages
from recap_memory.llm.base import ChatModel
from recap_memory.policy import Policy
from recap_memory.settings import SummarizationSettings


class RecapMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Compacts the agent's messages before each model call (see the module docstring).

    ``policy`` (or ``settings``) says when and how much; ``model`` writes the summaries
    (a recap model or a LangChain chat model; none: the extractive strategy);
    ``fallback`` what compacts when it fails; ``sink`` receives the usage events.
    """

    def __init__(
        self,
        *,
        policy: Policy | None = None,
        settings: SummarizationSettings | None = None,
        model: ChatModel | Any | None = None,
        fallback: Literal["extractive", "none"] | None = None,
        sink: UsageSink | None = None,
    ) -> None:
        super().__init__()
        self.summarization = Summarization(
            settings=settings, policy=policy, model=model, fallback=fallback, sink=sink
        )

    def before_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        """The ``messages`` update that compacts the state, or None when nothing is due."""
        update, _ = self.summarization.plan_sync(state_messages(state))
        return {"messages": update} if update is not None else None

    async def abefore_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        """:meth:`before_model` for ``ainvoke``."""
        update, _ = await self.summarization.plan(state_messages(state))
        return {"messages": update} if update is not None else None
