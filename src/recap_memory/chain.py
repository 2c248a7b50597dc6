"""The summary chain: rows that each say exactly which messages they cover.

A :class:`SummaryRow` holds a summary's text, the first and last message it
covers (by message id, or by position when messages have no ids), the
messages inside that range that were carried forward verbatim instead
(pinned or system), and the user's standing instructions, kept word for word.
Its header names the range by message numbers (1 is the conversation's first
message), a few characters, where they are known: exact ids stay in the row (the
result, the stored rows), not in the text the model reads every turn.

The model sees the whole chain as ONE user message (Design A), one section
per row; :func:`parse_summary_message` reads such a message back, so a history
compacted earlier can be compacted again without losing the chain.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from recap_memory.instructions import merge_instructions
from recap_memory.messages import Message

Ref = str | int
HEADER = "[recap summary of messages {first}–{last}]"
SIZED_HEADER = "[recap summary of messages {first}–{last}, {chars} chars]"
"""The header once the size of what the row folds is known: an update weighs the row by it."""
_HEADER_RE = re.compile(
    r"^\[recap summary of messages (\S+)–(\S+?)(?:, (\d+) chars)?\]$", re.MULTILINE
)
INSTRUCTIONS_HEADING = "**User instructions (verbatim):**"


@dataclass(frozen=True)
class SummaryRow:
    """One summary in the chain (see the module docstring)."""

    text: str
    first: Ref
    last: Ref
    messages: int
    """How many messages the row folds (its range minus those carried verbatim)."""
    instructions: tuple[str, ...] = ()
    carried: tuple[Ref, ...] = ()
    strategy: str = "extractive"
    source_chars: int = 0
    """Characters of the messages this row folds (the original record)."""
    span: tuple[int, int] | None = None
    """The first and last message it covers, numbered from 1 at the conversation's start
    (what its header shows); None where unknown, and then the header shows the refs."""

    @property
    def episode_range(self) -> str:
        """The covered range as ``"first-last"`` (Design B's ``"259-263"``)."""
        return f"{self.first}-{self.last}"

    def header(self) -> str:
        """The row's first line: the range it covers and the characters it folds."""
        return header(self.span or (self.first, self.last), self.source_chars)

    def render(self) -> str:
        """The row as the model will read it."""
        parts = [self.header(), self.text.strip()]
        if self.instructions:
            lines = "\n".join(f"- {i}" for i in self.instructions)
            parts.append(f"{INSTRUCTIONS_HEADING}\n{lines}")
        return "\n".join(parts)


def header(covers: tuple[Ref, Ref], source_chars: int = 0) -> str:
    """A row's first line for the range ``covers`` (and the characters it folds)."""
    first, last = covers
    if source_chars:
        return SIZED_HEADER.format(first=first, last=last, chars=source_chars)
    return HEADER.format(first=first, last=last)


@dataclass(frozen=True)
class Chain:
    """The ordered rows of a session's summaries."""

    rows: tuple[SummaryRow, ...] = field(default=())

    @property
    def latest(self) -> SummaryRow | None:
        """The newest row, if any."""
        return self.rows[-1] if self.rows else None

    def merged(self, count: int) -> SummaryRow:
        """The last ``count`` rows as one row (texts joined), to be updated cumulatively."""
        rows = self.rows[-count:]
        return SummaryRow(
            text="\n\n".join(r.text for r in rows),
            first=rows[0].first,
            last=rows[-1].last,
            messages=sum(r.messages for r in rows),
            instructions=merge_instructions((), (i for r in rows for i in r.instructions)),
            carried=tuple(c for r in rows for c in r.carried),
            strategy=rows[-1].strategy,
            source_chars=sum(r.source_chars for r in rows),
            span=(rows[0].span[0], rows[-1].span[1]) if rows[0].span and rows[-1].span else None,
        )

    def next_number(self) -> int | None:
        """The number of the first message after the chain's range (None: unknown)."""
        latest = self.latest
        return latest.span[1] + 1 if latest is not None and latest.span else None

    def with_row(self, row: SummaryRow, *, replaces: int = 0) -> Chain:
        """The chain with ``row`` appended in place of its last ``replaces`` rows."""
        kept = self.rows[: len(self.rows) - replaces]
        return replace(self, rows=(*kept, row))

    def message(self) -> Message | None:
        """The chain as one user message, or None when there is no summary yet."""
        if not self.rows:
            return None
        return Message(role="user", content="\n\n".join(r.render() for r in self.rows))


def _ref(text: str) -> Ref:
    return int(text) if text.lstrip("-").isdigit() else text


def parse_summary_message(message: Message) -> Chain | None:
    """Read a chain back from a message written by :meth:`Chain.message`, else None."""
    if message.role != "user" or not isinstance(message.content, str):
        return None
    text = message.content
    headers = list(_HEADER_RE.finditer(text))
    if not headers or headers[0].start() != 0:
        return None
    rows = []
    for n, match in enumerate(headers):
        end = headers[n + 1].start() if n + 1 < len(headers) else len(text)
        body = text[match.end() : end].strip()
        body, _, instructions = body.partition(INSTRUCTIONS_HEADING)
        first, last = _ref(match.group(1)), _ref(match.group(2))
        rows.append(
            SummaryRow(
                text=body.strip(),
                first=first,
                last=last,
                span=(first, last) if isinstance(first, int) and isinstance(last, int) else None,
                messages=0,
                instructions=tuple(
                    line[2:] for line in instructions.strip().splitlines() if line.startswith("- ")
                ),
                strategy="parsed",
                source_chars=int(match.group(3) or 0),
            )
        )
    return Chain(tuple(rows))


def split_view(messages: Sequence[Message]) -> tuple[list[Message], Chain, list[int]]:
    """Separate a recap summary message from the other messages.

    Returns the other messages, the chain read from the summary message (empty
    when there is none), and each returned message's position in the input.
    Only the first non-system message can be a summary: that is where
    :class:`recap_memory.compactor.Compactor` puts it.
    """
    rest: list[Message] = []
    positions: list[int] = []
    chain = Chain()
    for i, m in enumerate(messages):
        opening = all(r.is_system for r in rest) and not chain.rows
        parsed = parse_summary_message(m) if opening else None
        if parsed is not None:
            chain = parsed
        else:
            rest.append(m)
            positions.append(i)
    return rest, chain, positions
