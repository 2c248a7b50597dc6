"""One budget for recap, LangChain and LangMem, in the tokens they all count, and the
shared summarizer it configures."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langmem.short_term import summarization as langmem

from recap_memory.adapters.langchain import to_langchain
from recap_memory.counting import Meter, Size
from recap_memory.integrations.extractive_chat import RECAP_TEMPLATES, ExtractiveChatModel
from recap_memory.messages import Message

CHARS_PER_TOKEN = 4
LANGMEM_TEMPLATES = tuple(
    m.prompt.template
    for t in (langmem.DEFAULT_INITIAL_SUMMARY_PROMPT, langmem.DEFAULT_EXISTING_SUMMARY_PROMPT)
    for m in t.messages
    if hasattr(m, "prompt")
)
TEMPLATES = (*RECAP_TEMPLATES, DEFAULT_SUMMARY_PROMPT, *LANGMEM_TEMPLATES)
"""Every engine's prompt wording, which the shared model does not summarize."""


def lc_tokens(messages: Sequence[BaseMessage]) -> int:
    """LangChain's default token count (the unit of every budget here)."""
    return int(count_tokens_approximately(messages))


def tokens(messages: Sequence[Message]) -> int:
    """:func:`lc_tokens` of recap messages."""
    return lc_tokens([to_langchain(m) for m in messages])


def system_tokens(messages: Sequence[Message]) -> int:
    """:func:`tokens` of the system messages among ``messages``."""
    return tokens([m for m in messages if m.is_system])


@dataclass(frozen=True)
class PeerMeter(Meter):
    """recap's :class:`~recap_memory.counting.Meter` counting tokens as the peers do."""

    tokenizer: Callable[[str], int] = lambda text: math.ceil(len(text) / CHARS_PER_TOKEN)

    def message(self, message: Message) -> Size:
        """Size of one message, its tokens as ``count_tokens_approximately`` gives them."""
        return Size(len(message.countable_text), tokens([message]), 1)


PEER_METER = PeerMeter()


@dataclass(frozen=True)
class PeerBudget:
    """One budget for all three engines, in tokens."""

    keep: int
    """Recent messages kept verbatim."""
    summary: int
    """The summary (the shared model's cap is this many tokens in characters)."""
    system: int = 0
    """System messages, which every engine carries as they are."""
    trigger: int | None = None
    """Context size that triggers a fold; default ``system + keep + summary``."""

    @classmethod
    def share(cls, messages: Sequence[Message], fraction: float) -> PeerBudget:
        """``fraction`` of the non-system tokens: half kept verbatim, half summary."""
        system = system_tokens(messages)
        half = int((tokens(messages) - system) * fraction / 2)
        return cls(keep=half, summary=half, system=system)

    @property
    def summary_chars(self) -> int:
        """The shared model's cap."""
        return self.summary * CHARS_PER_TOKEN

    @property
    def trigger_tokens(self) -> int:
        """The context size (system messages included) that triggers a fold."""
        return self.trigger or self.system + self.keep + self.summary

    def model(self) -> ExtractiveChatModel:
        """A fresh shared model with this budget's cap."""
        return ExtractiveChatModel(max_chars=self.summary_chars, templates=TEMPLATES)
