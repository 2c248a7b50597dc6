"""The three engines, each configured to one :class:`~benchmarks.peers.budget.PeerBudget`
over the shared model: run once over a history (:data:`ONCE`), or fed a conversation
one message per turn (:data:`TURNS`).

recap runs as ``Compactor(LLMSummarizer(LangChainModel(model)), policy)``. LangChain's
``SummarizationMiddleware`` holds no system prompt in its state (as in ``create_agent``:
it is kept outside and put back). LangMem's ``summarize_messages`` gets the whole record.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware.summarization import SummarizationMiddleware
from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.runtime import Runtime
from langmem.short_term import summarization as langmem

from benchmarks.peers.budget import PEER_METER, PeerBudget, lc_tokens, tokens
from recap_memory.adapters.langchain import from_langchain, to_langchain
from recap_memory.compactor import Compactor
from recap_memory.conversation import Conversation
from recap_memory.integrations.extractive_chat import ExtractiveChatModel
from recap_memory.llm.langchain import LangChainModel
from recap_memory.messages import Message
from recap_memory.policy import Budget, Policy, Trigger
from recap_memory.summarizers.llm import LLMSummarizer

ENGINES = ("recap", "langchain", "langmem")
READS_ALL = {"langchain": "langchain, reads all", "langmem": "langmem, reads all"}
"""Each peer configured to read everything it folds (its best configuration here)."""
RUNTIME: Runtime[Any] = Runtime()

Engine = Callable[[list[Message], PeerBudget, ExtractiveChatModel], list[Message]]
"""Runs once over a history: the messages the agent's model receives afterwards."""
Turn = Callable[[Message], tuple[bool, int]]
"""Feeds one message: whether the engine folded, and the tokens the agent's model would
receive now."""


@dataclass(frozen=True)
class Feed:
    """An engine fed a conversation turn by turn: :attr:`turn` feeds one message,
    :attr:`context` is the text the agent's model would receive now."""

    turn: Turn
    context: Callable[[], str]


TurnEngine = Callable[[PeerBudget, ExtractiveChatModel], Feed]
"""Starts an engine on an empty conversation."""


# configured to a budget ----------------------------------------------------------------------


def recap_policy(budget: PeerBudget) -> Policy:
    """recap's policy for ``budget``."""
    return Policy(
        trigger=Trigger(tokens=budget.trigger_tokens),
        keep=Budget(tokens=budget.keep),
        summary_max=Budget(chars=budget.summary_chars),
    )


def recap_compactor(budget: PeerBudget, model: ExtractiveChatModel) -> Compactor:
    """recap's engine on the shared model, configured to ``budget`` — with no fallback, so
    every summary it writes comes from the shared model, as the peers' do."""
    summarizer = LLMSummarizer(LangChainModel(model), meter=PEER_METER)
    return Compactor(summarizer, recap_policy(budget), PEER_METER, fallback=None)


def middleware(
    budget: PeerBudget, model: ExtractiveChatModel, *, reads_all: bool = False
) -> SummarizationMiddleware[Any, Any]:
    """LangChain's middleware configured to ``budget`` (system prompt outside its state);
    ``reads_all``: ``trim_tokens_to_summarize=None``, so its summarizer reads all it folds
    (its default reads only the newest 4,000 tokens of it)."""
    trim: dict[str, Any] = {"trim_tokens_to_summarize": None} if reads_all else {}
    return SummarizationMiddleware(
        model,
        trigger=("tokens", budget.trigger_tokens - budget.system),
        keep=("tokens", budget.keep),
        **trim,
    )


def summarize(
    messages: list[BaseMessage],
    budget: PeerBudget,
    model: ExtractiveChatModel,
    running: Any = None,
    *,
    reads_all: bool = False,
    rolling_reads_all: bool = False,
) -> Any:
    """LangMem's ``summarize_messages`` configured to ``budget`` (its own warnings muted);
    ``reads_all`` (one pass over a whole history): ``max_tokens`` at the history's size so
    its summarizer's input is never trimmed, and ``max_tokens_before_summary`` at that
    size less the kept tail, so it folds all but the same tail the others keep (LangMem
    has no keep setting of its own); ``rolling_reads_all`` (turn by turn): the same
    trigger, ``max_tokens`` far above any conversation so nothing it folds is trimmed."""
    if rolling_reads_all:
        limits = {"max_tokens": 10**9, "max_tokens_before_summary": budget.trigger_tokens}
    elif reads_all:
        whole = lc_tokens(messages) + 1
        limits = {"max_tokens": whole, "max_tokens_before_summary": max(1, whole - budget.keep)}
    else:
        limits = {"max_tokens": budget.trigger_tokens}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return langmem.summarize_messages(
            messages,
            running_summary=running,
            model=model,
            max_summary_tokens=budget.summary,
            **limits,
        )


def agent_state(messages: list[BaseMessage]) -> Any:
    """An agent state holding ``messages`` (what ``before_model`` reads)."""
    return {"messages": messages}


def _applied(update: Mapping[str, Any]) -> list[BaseMessage]:
    """The state's messages after a ``RemoveMessage(REMOVE_ALL)`` + messages update."""
    return [m for m in update["messages"] if not isinstance(m, RemoveMessage)]


# once ------------------------------------------------------------------------------------------


def recap_once(
    messages: list[Message], budget: PeerBudget, model: ExtractiveChatModel
) -> list[Message]:
    """recap's view of ``messages`` after one compaction pass."""
    return recap_compactor(budget, model).compact_sync(messages).messages


def langchain_once(
    messages: list[Message],
    budget: PeerBudget,
    model: ExtractiveChatModel,
    *,
    reads_all: bool = False,
) -> list[Message]:
    """What the agent's model receives after ``SummarizationMiddleware.before_model``."""
    system = [m for m in messages if m.is_system]
    state = [to_langchain(m) for m in messages if not m.is_system]
    mw = middleware(budget, model, reads_all=reads_all)
    update = mw.before_model(agent_state(state), RUNTIME)
    if update is None:
        return list(messages)
    return system + [from_langchain(m) for m in _applied(update)]


def langmem_once(
    messages: list[Message],
    budget: PeerBudget,
    model: ExtractiveChatModel,
    *,
    reads_all: bool = False,
) -> list[Message]:
    """The messages ``summarize_messages`` returns for the model."""
    result = summarize([to_langchain(m) for m in messages], budget, model, reads_all=reads_all)
    return [from_langchain(m) for m in result.messages]


ONCE: dict[str, Engine] = {
    "recap": recap_once,
    "langchain": langchain_once,
    "langmem": langmem_once,
    READS_ALL["langchain"]: lambda m, b, model: langchain_once(m, b, model, reads_all=True),
    READS_ALL["langmem"]: lambda m, b, model: langmem_once(m, b, model, reads_all=True),
}


# turn by turn --------------------------------------------------------------------------------


def recap_turns(budget: PeerBudget, model: ExtractiveChatModel) -> Feed:
    """recap as an app calls it: ``compact_sync`` on the history before every turn, its
    answer kept as the history (a :class:`Conversation`, so a turn costs O(new))."""
    compactor = recap_compactor(budget, model)
    view: list[Message] = Conversation()

    def turn(message: Message) -> tuple[bool, int]:
        nonlocal view
        view.append(message)
        result = compactor.compact_sync(view)
        view = result.messages
        return result.report.compacted, result.report.size_after.tokens

    return Feed(turn, lambda: _text(view))


def langchain_turns(
    budget: PeerBudget, model: ExtractiveChatModel, *, reads_all: bool = False
) -> Feed:
    """The middleware's ``before_model`` before every turn; its updates applied to the state."""
    mw = middleware(budget, model, reads_all=reads_all)
    state: list[BaseMessage] = []
    system: list[Message] = []

    def turn(message: Message) -> tuple[bool, int]:
        nonlocal state
        if message.is_system:
            system.append(message)
        else:
            state.append(to_langchain(message))
        update = mw.before_model(agent_state(state), RUNTIME)
        if update is not None:
            state = _applied(update)
        return update is not None, tokens(system) + lc_tokens(state)

    return Feed(turn, lambda: _text([*system, *(from_langchain(m) for m in state)]))


def langmem_turns(
    budget: PeerBudget, model: ExtractiveChatModel, *, reads_all: bool = False
) -> Feed:
    """``summarize_messages`` over the whole record before every turn, with its running
    summary; ``reads_all``: its summarizer's input never trimmed (``max_tokens`` far above
    any conversation), the same trigger."""
    record: list[BaseMessage] = []
    running: Any = None
    latest: list[BaseMessage] = []

    def turn(message: Message) -> tuple[bool, int]:
        nonlocal running, latest
        record.append(to_langchain(message))
        result = summarize(record, budget, model, running, rolling_reads_all=reads_all)
        summary = result.running_summary
        folded = summary is not None and summary is not running
        if folded:
            running = summary
        latest = result.messages
        return folded, lc_tokens(latest)

    return Feed(turn, lambda: _text([from_langchain(m) for m in latest]))


def _text(messages: Sequence[Message]) -> str:
    return "\n".join(m.text for m in messages)


TURNS: dict[str, TurnEngine] = {
    "recap": recap_turns,
    "langchain": langchain_turns,
    "langmem": langmem_turns,
    READS_ALL["langchain"]: lambda b, model: langchain_turns(b, model, reads_all=True),
    READS_ALL["langmem"]: lambda b, model: langmem_turns(b, model, reads_all=True),
}
