"""Standing instructions: what the user told the assistant to always or never do.

Rule 8 of DESIGN.md: such instructions survive compaction word for word. The
compactor lifts them out of the folded user messages and carries them in the
summary row verbatim, beside (not inside) whatever the summarizer writes, so
no summarizer can paraphrase them away.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from recap_memory.messages import Message

_OPENING = r"(?:^|[,;:—–(]\s*|\s[-]\s+|\b(?:and|but|also|so|oh|btw|plus|then)\s+)"
"""Where an imperative may stand: at the start, after a comma or dash, after a
conjunction (``Also, never call me``, ``…, and please always reply in German``)."""
_IMPERATIVE = re.compile(
    _OPENING
    + r"(?:please\s+)?(?:always|never|don'?t|do not|make sure|remember to|avoid|only use|stop)\s+\w"
    r"|\b(from now on|going forward|you must|you should (always|never)|i want you to|"
    r"for the rest of (this|our) (conversation|chat|session))\b",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
LONGEST = 400


def standing_instructions(messages: Iterable[Message]) -> list[str]:
    """Sentences of user messages that give the assistant a standing instruction."""
    found: list[str] = []
    for message in messages:
        if message.role != "user":
            continue
        for sentence in _SPLIT.split(message.text):
            sentence = sentence.strip()
            fits = sentence and len(sentence) <= LONGEST and sentence not in found
            if fits and _IMPERATIVE.search(sentence):
                found.append(sentence)
    return found


def merge_instructions(old: Iterable[str], new: Iterable[str]) -> tuple[str, ...]:
    """Old instructions then new ones, each once, in order."""
    merged: list[str] = []
    for item in (*old, *new):
        if item not in merged:
            merged.append(item)
    return tuple(merged)
