"""The per-turn call: the time each engine spends deciding that nothing is due, on
histories of growing size, through the path its users call (engines alternate sample
by sample, so drift hits all).

recap: ``Compactor.compact_sync(history)`` on a list of OpenAI chat dicts that grows by
one message before each call, as an app appends a turn and calls it; the same on a
:class:`~recap_memory.conversation.Conversation` (:data:`AS_CONVERSATION`); and
``RecapMiddleware.before_model`` on an agent state that grows the same way
(:data:`AS_MIDDLEWARE`). LangChain: ``SummarizationMiddleware.before_model`` on the
state; LangMem: ``summarize_messages``."""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langmem.short_term import summarization as langmem

from benchmarks.peers.budget import PeerBudget
from benchmarks.peers.engines import RUNTIME, agent_state, middleware, recap_policy
from recap_memory.compactor import Compactor
from recap_memory.conversation import Conversation
from recap_memory.integrations.middleware import RecapMiddleware

AS_CONVERSATION = "Conversation"
AS_MIDDLEWARE = "RecapMiddleware"
RECAP_PATHS = (AS_CONVERSATION, AS_MIDDLEWARE)
"""recap's other per-turn paths, each timed beside the peers as recap's own row is."""
UNREACHABLE = 10**12
"""A trigger no test history reaches (the checks are timed alone)."""
CHECK_BUDGET = PeerBudget(keep=10, summary=250, trigger=UNREACHABLE)
"""The budget of every check: nothing is ever due (a shared model capped at 1,000 chars)."""


@dataclass(frozen=True)
class CheckCost:
    """Seconds of one per-turn trigger check (nothing due), per engine, at one size."""

    messages: int
    seconds: dict[str, float]


def trigger_checks(size: int) -> dict[str, Callable[[], object]]:
    """Each engine's per-turn check on a history of ``size`` messages, nothing due."""
    record: list[BaseMessage] = [
        (HumanMessage if i % 2 == 0 else AIMessage)(
            f"message {i}: a short line of chat", id=f"m{i}"
        )
        for i in range(size)
    ]
    model = CHECK_BUDGET.model()
    mw = middleware(CHECK_BUDGET, model)
    compactor = Compactor(policy=recap_policy(CHECK_BUDGET))
    history = [_chat(i) for i in range(size)]
    compactor.compact_sync(history)  # the first call reads the history whole
    arriving = itertools.count(size)
    state = agent_state(record)
    conversation_engine = Compactor(policy=recap_policy(CHECK_BUDGET))
    conversation = Conversation(_chat(i) for i in range(size))
    conversation_engine.compact_sync(conversation)
    recap_mw = RecapMiddleware(policy=recap_policy(CHECK_BUDGET))
    agent_record = list(record)
    recap_mw.before_model(agent_state(agent_record), RUNTIME)

    def langchain_check() -> object:
        return mw.before_model(state, RUNTIME)

    def langmem_check() -> object:  # bare: muting its warnings (as summarize does) costs time
        return langmem.summarize_messages(
            record, running_summary=None, model=model, max_tokens=UNREACHABLE
        )

    def recap_check() -> object:
        history.append(_chat(next(arriving)))
        return compactor.compact_sync(history)

    def conversation_check() -> object:
        conversation.append(_chat(next(arriving)))
        return conversation_engine.compact_sync(conversation)

    def middleware_check() -> object:
        n = next(arriving)
        agent_record.append((HumanMessage if n % 2 == 0 else AIMessage)(f"message {n}", id=f"m{n}"))
        return recap_mw.before_model(agent_state(agent_record), RUNTIME)

    return {
        "recap": recap_check,
        "langchain": langchain_check,
        "langmem": langmem_check,
        AS_CONVERSATION: conversation_check,
        AS_MIDDLEWARE: middleware_check,
    }


def _chat(i: int) -> dict[str, str]:
    return {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}: a short line"}


def check_costs(size: int, samples: int, sample_seconds: float = 2e-3) -> CheckCost:
    """Median seconds per check; engines alternate sample by sample so drift hits all."""
    checks = trigger_checks(size)
    batches = {name: _batch(check, sample_seconds) for name, check in checks.items()}
    timings: dict[str, list[float]] = {name: [] for name in checks}
    for _ in range(samples):
        for name, check in checks.items():
            started = time.perf_counter()
            for _ in range(batches[name]):
                check()
            timings[name].append((time.perf_counter() - started) / batches[name])
    return CheckCost(size, {name: statistics.median(t) for name, t in timings.items()})


def _batch(check: Callable[[], object], seconds: float) -> int:
    """How many calls make one timed sample of about ``seconds``."""
    started = time.perf_counter()
    check()
    once = time.perf_counter() - started
    return max(1, min(100_000, int(seconds / max(once, 1e-9))))
