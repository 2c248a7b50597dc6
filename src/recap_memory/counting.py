"""Measuring what the model receives: characters, tokens and messages.

Token counting is pluggable: a :class:`Meter` takes any ``str -> int``
function. The default, :func:`approx_tokens`, needs no download and stays
within a few percent of BPE tokenizers on English prose and JSON; plug in a
real tokenizer (for example ``tiktoken.get_encoding("o200k_base").encode`` wrapped
in ``len``) when exact figures matter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recap_memory.messages import Message

_PIECES = re.compile(r"[A-Za-z]+|\d{1,3}|[^\sA-Za-z\d]|\s+")


def approx_tokens(text: str) -> int:
    """Approximate BPE token count, offline: words split in ~5-letter pieces, digits in threes."""
    total = 0
    for piece in _PIECES.findall(text):
        if piece[0].isspace():
            total += 1 if "\n" in piece and len(piece) > 1 else 0
        elif piece[0].isalpha():
            total += 1 + (len(piece) - 1) // 5
        else:
            total += 1
    return total


@dataclass(frozen=True)
class Size:
    """The size of some messages in the three units budgets use."""

    chars: int = 0
    tokens: int = 0
    messages: int = 0

    def __add__(self, other: Size) -> Size:
        return Size(
            self.chars + other.chars, self.tokens + other.tokens, self.messages + other.messages
        )

    def __sub__(self, other: Size) -> Size:
        return Size(
            self.chars - other.chars, self.tokens - other.tokens, self.messages - other.messages
        )

    def get(self, unit: str) -> int:
        """The figure for ``unit`` (``chars``, ``tokens`` or ``messages``)."""
        value: int = getattr(self, unit)
        return value


@dataclass(frozen=True)
class Meter:
    """Measures messages (and tool schemas) the way the model will receive them."""

    tokenizer: Callable[[str], int] = approx_tokens
    message_overhead_tokens: int = 4
    """Tokens a chat template adds around every message (role markers)."""

    def message(self, message: Message) -> Size:
        """Size of one message."""
        text = message.countable_text
        return Size(len(text), self.tokenizer(text) + self.message_overhead_tokens, 1)

    def messages(self, messages: Iterable[Message]) -> Size:
        """Total size of several messages."""
        total = Size()
        for m in messages:
            total = total + self.message(m)
        return total

    def tools(self, tools: Sequence[Mapping[str, Any]] | None) -> Size:
        """Size of the tool schemas sent with every request (counted, never removed)."""
        if not tools:
            return Size()
        text = json.dumps(list(tools), separators=(",", ":"))
        return Size(len(text), self.tokenizer(text), 0)

    def text(self, text: str) -> Size:
        """Size of a bare string (a summary, a prompt)."""
        return Size(len(text), self.tokenizer(text), 0)
