"""How extractive pieces are laid out as a summary, and read back from one.

A chat becomes a dated digest in markdown: each day the conversation dates
(``[Session of 1:56 pm on 8 May, 2023]`` heads it as ``[8 May 2023]``) on its own
line, then one bullet per speaker that day, the speaker first and the chosen
pieces in order, joined by `` … `` (by a space where one continues the other);
relative dates are pinned to the day (:mod:`recap_memory.summarizers.dates`).
Undated chats get one bullet per turn::

    [8 May 2023]
    - Caroline: I went to a LGBTQ support group yesterday (7 May 2023) and it was so powerful.
    - Melanie: I'm off to go swimming with the kids. … We're going camping next month (June 2023).

An agent span fills Design A's template::

    **Investigating:** <the user's request>
    **Key findings:**
    - get_order: order_id: A-66730, status: processing
    **Ruled out:**
    - …
    **Current state:** <the assistant's last word>

:func:`parse_previous` reads either back into pieces, so an update chooses among the
previous summary's pieces and the new span's alike; :func:`render` of what it
parsed gives the same text again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from recap_memory.messages import Message
from recap_memory.summarizers.base import Style, speaker
from recap_memory.summarizers.dates import parse_date, pinned, written
from recap_memory.summarizers.text import (
    MIN_CLAUSE_WORDS,
    clauses,
    collapse_repeats,
    normal,
    sentences,
    without_filler,
    words,
)
from recap_memory.summarizers.tool_output import (
    collapsed_lines,
    identifiers,
    json_facts,
    shape,
)

WIDE_STOPS = ("。", "！", "？", "、", "，", "；", "：")
JOIN = " … "
"""Between pieces of one turn that were not next to each other."""
HEADINGS = {
    "investigating": "**Investigating:**",
    "finding": "**Key findings:**",
    "ruled_out": "**Ruled out:**",
    "state": "**Current state:**",
}
INLINE = ("investigating", "state")
"""Sections written on their heading's line; the others are bullet lists."""
_GROUP = re.compile(r"^\[[^\[\]\n]{1,200}\]$")
_NAME_LEAD = re.compile(r"^(?P<name>[^\W\d_][\w.'’-]*(?: [^\W\d_][\w.'’-]*)?): ")
_RULED_OUT = re.compile(
    r"\b(ruled out|not (the )?(cause|related|responsible|the issue)|unrelated|"
    r"no (errors?|issues?|problems?|change)|isn'?t|wasn'?t|aren'?t|doesn'?t|didn'?t|excluded|"
    r"(looks|is) (fine|normal|healthy))\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<=\w[ ,] )[^\W\d_a-z]\w+|(?<=\w )[^\W\d_a-z]\w+")
"""A word that starts with a capital (any script that has them) after another word."""
_HEADING = re.compile(r"^\*\*(?P<name>[^*]+):\*\*\s*(?P<rest>.*)$")
_SECTION_OF = {"Investigating": "investigating", "Ruled out": "ruled_out"}
"""Sections of a previous summary carried into its update (an old current state is a
finding now)."""


LineKey = tuple[str, str]
"""What puts pieces on one line: (where they come from, who says them)."""


@dataclass(frozen=True, eq=False)
class Piece:
    """A candidate piece of the summary: a sentence, a clause, a fact line or a log
    digest, verbatim, with where it goes."""

    order: tuple[int, int]
    section: str
    """``chat``, or the template's ``investigating``/``finding``/``ruled_out``/``state``."""
    line: LineKey
    """Pieces with the same line key are written on one line (in a chat, one speaker's
    pieces of one day; else one message's)."""
    prefix: str
    """``Speaker: `` or ``tool_name: `` leading the line."""
    text: str
    group: str = ""
    """The date header of the conversation this piece stands under (chats)."""
    previous: bool = False
    """Read back from the previous summary (else from the span being folded)."""
    follows: bool = False
    """The text continues the piece before it (``order`` one less) with nothing between."""
    words: frozenset[str] = field(init=False)
    ids: frozenset[str] = field(init=False)
    names: frozenset[str] = field(init=False)
    """Words capitalized inside the text (not first): names, places, titles."""
    shape: str = field(init=False)

    def __post_init__(self) -> None:
        ids = identifiers(self.text)
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "words", frozenset(words(self.text)) | ids)
        object.__setattr__(self, "names", frozenset(normal(n) for n in _NAME.findall(self.text)))
        object.__setattr__(self, "shape", shape(self.text))

    @property
    def asks(self) -> bool:
        """Whether the piece is a question."""
        return self.text.rstrip().endswith(("?", "？"))

    @property
    def slight(self) -> bool:
        """Whether the piece is too short to say much on its own (an exclamation, a
        reply of a word or two): it reads as a fragment in a summary."""
        return len(self.words) < MIN_CLAUSE_WORDS

    def cost_alone(self) -> int:
        """Characters the piece takes on a line of its own."""
        return len(self.prefix) + len(self.text) + 3


class Layout:
    """The costs and forced pieces of one style's layout."""

    def __init__(self, style: Style) -> None:
        self.style = style

    def fixed_cost(self) -> int:
        """Characters the layout takes whatever is chosen (the template's headings)."""
        return 0 if self.style == "chat" else sum(len(h) + 2 for h in HEADINGS.values())

    def forced(self, candidates: Sequence[Piece]) -> list[Piece]:
        """Pieces taken first: in an agent span, the request and the current state."""
        if self.style == "chat":
            return []
        firsts = (
            next((p for p in candidates if p.section == section and p.words), None)
            for section in INLINE
        )
        return [p for p in firsts if p is not None]

    def cost(self, piece: Piece, lines: set[LineKey], groups: set[str]) -> int:
        """What ``piece`` adds, given the lines and groups already begun."""
        if piece.line in lines:
            return len(JOIN) + len(piece.text)
        group = len(piece.group) + 1 if piece.group and piece.group not in groups else 0
        return piece.cost_alone() + group


def pieces_of(
    messages: Sequence[Message], style: Style, *, start: int = 1, group: str = ""
) -> Iterator[Piece]:
    """The candidate pieces of ``messages`` (``group``: the date header in force at the
    start of the span)."""
    if style == "chat":
        yield from _chat_pieces(messages, start, group)
        return
    last = max((i for i, m in enumerate(messages) if m.role == "assistant" and m.text), default=-1)
    for i, message in enumerate(messages):
        yield from _agent_pieces(message, start + i, i == last)


def _chat_pieces(messages: Sequence[Message], start: int, group: str) -> Iterator[Piece]:
    for i, message in enumerate(messages):
        who, text = named_speaker(message)
        prefix = f"{who}: "
        pieces = list(
            _text_pieces(text, start + i, prefix, lambda _: "chat", _day_and_speaker, group)
        )
        group = next((dated(g) for g in _groups_in(text)), group)
        yield from pieces


def dated(header: str) -> str:
    """How a date header heads its pieces: ``[8 May 2023]`` when it holds a calendar date
    (the digest is grouped by day), else as written."""
    day = parse_date(header)
    return header if day is None else f"[{written(day)}]"


def _day_and_speaker(index: int, group: str) -> str:
    """A chat's line: a speaker's pieces of one day (of one message where undated)."""
    return f"d{group}" if group else f"m{index}"


def _message_line(index: int, group: str) -> str:
    return f"m{index}"


def _groups_in(text: str) -> list[str]:
    """The date headers written in ``text``, last first."""
    return [line.strip() for line in reversed(text.splitlines()) if _GROUP.match(line.strip())]


def _text_pieces(
    text: str,
    index: int,
    prefix: str,
    section_of: Callable[[str], str],
    line_of: Callable[[int, str], str],
    group: str = "",
) -> Iterator[Piece]:
    """The clauses of one message's text as pieces (a bracketed date line sets the group
    of those after it instead)."""
    today = parse_date(group)
    for j, (clause, opens) in enumerate(clauses(text)):
        if _GROUP.match(clause):
            group, today = dated(clause), parse_date(clause)
            continue
        piece = collapse_repeats(without_filler(clause) if opens else clause)
        follows = j > 0 and piece == clause
        if today is not None:
            piece = pinned(piece, today)
        yield Piece(
            (index, j),
            section_of(clause),
            (line_of(index, group), prefix),
            prefix,
            piece,
            group,
            False,
            follows,
        )


def _agent_pieces(message: Message, index: int, last: bool) -> Iterator[Piece]:
    if message.role == "tool":
        prefix = f"{message.name or 'tool'}: "
        facts = json_facts(message.text)
        if facts is None:
            facts = collapsed_lines(list(sentences(message.text)))
        for j, fact in enumerate(facts):
            yield Piece(
                (index, j), "finding", (f"m{index}", prefix), prefix, collapse_repeats(fact)
            )
        return
    calls = [f"called {c.name}({_arguments(c.arguments)})" for c in message.tool_calls]
    for j, call in enumerate(calls):
        yield Piece((index, -len(calls) + j), "finding", (f"m{index}", "call"), "", call)

    def section_of(clause: str) -> str:
        if message.role == "user":
            return "investigating"
        if last:
            return "state"
        return "ruled_out" if _RULED_OUT.search(clause) else "finding"

    yield from _text_pieces(message.text, index, "", section_of, _message_line)


def named_speaker(message: Message) -> tuple[str, str]:
    """The author and text of a chat message; a transcript's own ``Name: `` lead (after
    an optional first line in brackets) names the author better than the role does."""
    text = message.text
    first, newline, rest = text.partition("\n")
    head = f"{first}\n" if newline and _GROUP.match(first.strip()) else ""
    body = rest if head else text
    match = _NAME_LEAD.match(body)
    if match is None:
        return speaker(message), text
    return match["name"], head + body[match.end() :]


def _arguments(arguments: str) -> str:
    try:
        data = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(data, dict):
        return ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v}"
            for k, v in data.items()
        )
    return arguments


def render(chosen: Sequence[Piece], layout: Layout, *, trailing_group: str = "") -> str:
    """The chosen pieces laid out (see the module docstring), in their original order.

    ``trailing_group``, the date header in force at the end of the span, is written last
    when no chosen piece stands under it, so the next update knows the date it
    continues from.
    """
    ordered = sorted(chosen, key=lambda p: p.order)
    if layout.style == "chat":
        out, current = [], ""
        for group, line in _lines(ordered):
            if group and group != current:
                out.append(group)
                current = group
            out.append(f"- {line}")
        if trailing_group and trailing_group != current:
            out.append(trailing_group)
        return "\n".join(out)
    blocks = []
    for section, heading in HEADINGS.items():
        lines = [line for _, line in _lines([p for p in ordered if p.section == section])]
        if not lines:
            continue
        if section in INLINE:
            blocks.append(f"{heading} " + JOIN.join(lines))
        else:
            blocks.append(heading + "\n" + "\n".join(f"- {line}" for line in lines))
    return "\n".join(blocks)


def _lines(ordered: Sequence[Piece]) -> list[tuple[str, str]]:
    """(group, line) for pieces in order, those of one line key joined on the line where
    the first of them stands: by a space where one continues the other in the
    conversation, else by `` … ``."""
    lines: dict[LineKey, tuple[str, str]] = {}
    last: dict[LineKey, Piece] = {}
    for piece in ordered:
        before = last.get(piece.line)
        if before is None:
            lines[piece.line] = (piece.group, f"{piece.prefix}{piece.text}")
        else:
            contiguous = piece.follows and piece.order == (before.order[0], before.order[1] + 1)
            group, line = lines[piece.line]
            lines[piece.line] = (group, f"{line}{_gap(line) if contiguous else JOIN}{piece.text}")
        last[piece.line] = piece
    return list(lines.values())


def _gap(before: str) -> str:
    """What separates two contiguous pieces: nothing after the full-width marks of scripts
    written without spaces, else a space."""
    return "" if before.endswith(WIDE_STOPS) else " "


def parse_previous(text: str, style: Style) -> tuple[list[Piece], str]:
    """The pieces of a summary written by :func:`render` (any other text line by line),
    and the date header in force at its end."""
    pieces: list[Piece] = []
    section = "chat" if style == "chat" else "finding"
    group = ""
    for n, raw in enumerate(text.splitlines()):
        line = raw.strip()
        if not line:
            continue
        if _GROUP.match(line):
            group = line
            continue
        if style != "chat" and (heading := _HEADING.match(line)):
            section = _SECTION_OF.get(heading["name"].strip(), "finding")
            line = heading["rest"].strip()
            if not line:
                continue
        line = line.removeprefix("- ")
        lead = _NAME_LEAD.match(line)
        prefix = lead.group(0) if lead else ""
        for j, part in enumerate(line[len(prefix) :].split(JOIN)):
            if part.strip():
                order = (0, n * 1000 + j)
                key = (f"p{n}", prefix)
                pieces.append(Piece(order, section, key, prefix, part.strip(), group, True))
    return pieces, group
