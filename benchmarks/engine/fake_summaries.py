"""What the fake model of ``python -m benchmarks engine`` answers to a summary prompt: a summary
sized as a real one would be, so that recap and the baseline are charged fairly for the
summaries they send back to the model."""

from __future__ import annotations

import re
from collections.abc import Sequence

from recap_memory.llm.base import ChatTurn
from recap_memory.summarizers.llm import Prompts

SUMMARY_SHARE = 0.8
"""The fake model's summaries fill up to this share of the cap they are given."""
_PROMPTS = (Prompts().structured, Prompts().fresh, Prompts().cumulative)
_TERM = re.compile(r"[A-Za-z][\w.-]*\d[\w.-]*|\d[\d.:-]*\d|[A-Z][a-zà-ÿ]{2,}")
_TEMPLATE_WORDS = frozenset(word for t in _PROMPTS for word in _TERM.findall(t))
_MAX_CHARS = re.compile(r"At most (\d+) characters")


def write_summary(messages: Sequence[ChatTurn]) -> str:
    """The fake model's answer to a summary prompt: the names, numbers and ids of the
    prompt (the previous summary's and the new transcript's), newest kept, a quarter of
    the source's length at most and :data:`SUMMARY_SHARE` of the cap."""
    prompt = messages[-1]["content"]
    found = _MAX_CHARS.search(prompt)
    max_chars = int(found.group(1)) if found else 2_000
    template = max(len(t.format(transcript="", previous="", max_chars=max_chars)) for t in _PROMPTS)
    room = min(int(max_chars * SUMMARY_SHARE), (len(prompt) - template) // 4)
    head = "Summary: the conversation covered"
    terms = [t for t in dict.fromkeys(reversed(_TERM.findall(prompt))) if t not in _TEMPLATE_WORDS]
    kept, used = [], len(head) + 1
    for term in terms:
        if used + len(term) + 2 > room:
            break
        kept.append(term)
        used += len(term) + 2
    return f"{head} " + ", ".join(reversed(kept)) + "."
