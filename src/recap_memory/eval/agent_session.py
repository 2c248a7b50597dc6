"""A long agent session with facts planted at its start: what survives 300 turns?

The session opens with a customer who gives a name, an account id, an order id, a
delivery address and a standing instruction written mid-sentence; the agent looks
the order up (a tool call and its JSON result with a tracking number). Then come
τ-bench airline trajectories, one after another, as further tool-using turns of the
same session, until it holds ``turns`` user turns. Fed one message per turn through
the library, the final context is searched for every planted fact, verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recap_memory.compactor import Compactor
from recap_memory.eval.budget import foldable_chars
from recap_memory.eval.readability import summary_readable
from recap_memory.eval.rolling import Rolled, roll, rolling_policy
from recap_memory.eval.taubench import trajectory_messages
from recap_memory.messages import Message, ToolCall, is_valid_history
from recap_memory.summarizers.base import Summarizer

PLANTED_REQUEST = (
    "Hi, this is Priya Raman, account ACC-88231. My order A-55102 still has not arrived; "
    "please ship the replacement to 14 Larchwood Lane, Portland, OR 97205. Also, never call "
    "me on my phone, email only."
)
TRACKING = "1Z999AA10123456784"
FACTS = (
    "Priya Raman",
    "ACC-88231",
    "A-55102",
    "14 Larchwood Lane",
    TRACKING,
    "never call me on my phone, email only",
)
DEFAULT_TURNS = 300


def planted_opening() -> list[Message]:
    """The session's first turn: the facts, the order looked up, the agent's answer."""
    call = ToolCall(id="planted_1", name="get_order", arguments='{"order_id": "A-55102"}')
    result = {"order_id": "A-55102", "status": "in transit", "carrier": "UPS",
              "tracking_number": TRACKING, "account": "ACC-88231"}  # fmt: skip
    return [
        Message(role="user", content=PLANTED_REQUEST, id="planted-u"),
        Message(role="assistant", tool_calls=(call,), id="planted-a"),
        Message(
            role="tool",
            tool_call_id="planted_1",
            name="get_order",
            content=json.dumps(result),
            id="planted-t",
        ),
        Message(
            role="assistant",
            content=f"Order A-55102 is in transit with UPS, tracking number {TRACKING}. "
            "I will send the replacement to 14 Larchwood Lane and contact you by email only.",
            id="planted-r",
        ),
    ]


def long_session(records: Sequence[Mapping[str, Any]], turns: int = DEFAULT_TURNS) -> list[Message]:
    """The planted opening, then trajectories' turns (tool-call ids made unique, every
    message an id, as a service's log has) up to ``turns`` user turns; the first
    trajectory's system prompt leads."""
    first = trajectory_messages(records[0])
    session = [m for m in first if m.is_system][:1] + planted_opening()
    users = 1
    k = 0
    while users < turns:
        record = records[k % len(records)]
        for n, m in enumerate(trajectory_messages(record)):
            if m.is_system:
                continue
            session.append(_renamed(m, f"s{k}_").replace(id=f"s{k}-{n}"))
            users += m.role == "user"
        k += 1
    return session


def _renamed(message: Message, prefix: str) -> Message:
    """``message`` with its tool-call ids prefixed, so the session's ids stay unique."""
    calls = tuple(
        ToolCall(id=prefix + c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls
    )
    call_id = prefix + message.tool_call_id if message.tool_call_id else None
    return message.replace(tool_calls=calls, tool_call_id=call_id)


@dataclass(frozen=True)
class SessionOutcome:
    """What survived a long agent session."""

    found: dict[str, bool]
    rolled: Rolled
    valid: bool
    messages: int
    users: int
    size: float
    """Foldable characters of the final context ÷ the session's."""
    readable: float | None

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain data."""
        return {
            "facts_found": sum(self.found.values()),
            "facts": len(self.found),
            "facts_found_share": sum(self.found.values()) / max(1, len(self.found)),
            "found": self.found,
            "valid_history": self.valid,
            "messages": self.messages,
            "user_turns": self.users,
            "size": self.size,
            "passes": self.rolled.passes,
            "worst_context_over_trigger": self.rolled.worst,
            "readable": self.readable,
            "call_ms": self.rolled.call_ms,
        }


def evaluate_session(
    records: Sequence[Mapping[str, Any]],
    summarizer: Summarizer,
    trigger: float,
    keep: float,
    turns: int = DEFAULT_TURNS,
    *,
    with_record: bool = False,
) -> SessionOutcome:
    """The long session fed turn by turn; every planted fact looked for at the end
    (``with_record``: the full log handed over each turn)."""
    session = long_session(records, turns)
    policy = rolling_policy(session, trigger, keep)
    assert policy.trigger.chars is not None
    rolled = roll(
        session, Compactor(summarizer, policy), policy.trigger.chars, with_record=with_record
    )
    context = "\n".join(m.countable_text for m in rolled.messages)
    return SessionOutcome(
        found={fact: fact in context for fact in FACTS},
        rolled=rolled,
        valid=is_valid_history(rolled.messages),
        messages=len(session),
        users=sum(m.role == "user" for m in session),
        size=foldable_chars(rolled.messages) / max(1, foldable_chars(session)),
        readable=summary_readable(rolled.messages, "\n".join(m.text for m in session)),
    )


__all__ = ["FACTS", "SessionOutcome", "evaluate_session", "long_session"]
