"""How much of a summary reads as the conversation's own words.

*Readable share*: the share of a summary's words that lie inside a run of at least
:data:`RUN` consecutive words found verbatim in the conversation (both normalized:
casefolded, punctuation dropped). Whole clauses score near 1; a word list with the
function words stripped scores near 0, however many answer words it holds. recap's
own lines (the row header, date headings, template headings, the instruction list)
are left out: they are layout, not the summary's text. Dates recap adds to pin a
relative date (``yesterday (7 May 2023)``) count against it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from recap_memory.chain import INSTRUCTIONS_HEADING, parse_summary_message
from recap_memory.messages import Message
from recap_memory.summarizers.text import words

RUN = 4
_OWN_LINE = re.compile(r"^\[[^\[\]]*\]$|^\*\*[^*]+:\*\*$")
"""recap's own lines: the row header, a date heading of the digest, a template heading."""
_HEADING = re.compile(r"^\*\*[^*]+:\*\*\s*")


def summary_words(summary: str) -> list[str]:
    """The words of a summary's text, without recap's headers, template headings and the
    verbatim instruction list."""
    text = summary.split(INSTRUCTIONS_HEADING, 1)[0]
    lines = (_HEADING.sub("", line.strip()) for line in text.splitlines())
    return [w for line in lines if not _OWN_LINE.match(line) for w in words(line)]


def readable_share(summary: str, conversation: str) -> float:
    """The readable share of ``summary`` against ``conversation`` (see the module
    docstring); 1.0 for an empty summary."""
    tokens = summary_words(summary)
    if not tokens:
        return 1.0
    source = words(conversation)
    runs = {tuple(source[i : i + RUN]) for i in range(len(source) - RUN + 1)}
    readable = [False] * len(tokens)
    for i in range(len(tokens) - RUN + 1):
        if tuple(tokens[i : i + RUN]) in runs:
            for k in range(i, i + RUN):
                readable[k] = True
    return sum(readable) / len(tokens)


def summary_readable(context: Sequence[Message], conversation: str) -> float | None:
    """The readable share of the summary among ``context`` (None when there is none)."""
    summary = next((m for m in context if parse_summary_message(m) is not None), None)
    return None if summary is None else readable_share(summary.text, conversation)
