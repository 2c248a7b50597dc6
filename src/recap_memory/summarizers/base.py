"""The one interface every compaction strategy implements.

A strategy gets a :class:`FoldRequest` (the messages to fold, the previous
summary for a cumulative update, the size cap) and returns a :class:`Fold`:
either a summary text, or replacement messages that stand in for the span
(observation masking), never both empty.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from recap_memory.counting import Meter
from recap_memory.llm.base import Usage
from recap_memory.messages import Message

Style = Literal["agent", "chat"]


@dataclass(frozen=True)
class FoldRequest:
    """What a strategy is asked to fold."""

    messages: Sequence[Message]
    max_chars: int
    """The summary must not be longer than this."""
    previous: str | None = None
    """The latest summary's text, to update cumulatively (Design B), or None."""
    previous_chars: int = 0
    """Characters of the conversation the previous summary stands for (0: unknown)."""
    meter: Meter = field(default_factory=Meter)
    usage: list[Usage] = field(default_factory=list)
    """Where a strategy records each model call it makes (failed ones included)."""
    kept: Sequence[Message] = ()
    """The messages the model will still read verbatim after the summary (the recent
    turns, pinned and system messages): a summary need not repeat what they say."""
    record: Sequence[Message] = ()
    """The raw messages the previous summary stands for, when at hand and the strategy
    re-reads them (``Summarizer.reads_record``); empty otherwise."""

    @property
    def style(self) -> Style:
        """``agent`` for spans with tool calls (structured template), else ``chat``."""
        agentic = any(m.tool_calls or m.role == "tool" for m in self.messages)
        return "agent" if agentic else "chat"


@dataclass(frozen=True)
class Fold:
    """A strategy's answer: a summary text, or messages that replace the span."""

    summary: str | None = None
    replacement: tuple[Message, ...] = ()
    model: str | None = None


class Summarizer(ABC):
    """A compaction strategy. Implement :meth:`fold`; set ``name``."""

    name: ClassVar[str]
    reads_record: ClassVar[bool] = False
    """Whether a fold re-reads the raw messages the previous summary stands for, when
    they are at hand (cheap for the extractive strategy; a model would pay for them)."""

    @abstractmethod
    async def fold(self, request: FoldRequest) -> Fold:
        """Fold ``request.messages`` into a summary or replacement messages."""

    def running_on(self, executor: Executor) -> Summarizer:
        """This strategy with its CPU-bound work run on ``executor`` (a process pool keeps
        a server's event loop free of the work and of its garbage collections); the
        strategy itself when it has no such work."""
        return self


def speaker(message: Message) -> str:
    """How a transcript names the author of a message."""
    if message.name and message.role in ("user", "assistant"):
        return message.name
    return {
        "user": "User",
        "assistant": "Assistant",
        "tool": "Tool",
        "system": "System",
        "developer": "Developer",
    }[message.role]


def transcript_lines(message: Message) -> list[str]:
    """A message as plain transcript lines (tool calls and results spelled out)."""
    lines = []
    if message.role == "tool":
        lines.append(f"Tool result ({message.name or message.tool_call_id}): {message.text}")
    elif message.text:
        lines.append(f"{speaker(message)}: {message.text}")
    lines.extend(f"Assistant called {c.name}({c.arguments})" for c in message.tool_calls)
    return lines


def transcript(messages: Sequence[Message]) -> str:
    """Messages as a plain transcript, one block per message."""
    return "\n".join(line for m in messages for line in transcript_lines(m))
