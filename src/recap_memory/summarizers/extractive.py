"""The ``extractive`` strategy: the embedded default, no model, deterministic.

It keeps what later questions need — names, numbers, dates, identifiers,
decisions, what was ruled out — by choosing, under the size cap, the
sentences (and tool-output facts) that cover the most informative words not
yet covered (a greedy weighted set cover, which is near-optimal for this kind
of objective). Chosen sentences are written tersely (filler and function words
dropped) and in their original order.

Agent spans (with tool calls) fill Design A's template::

    **Investigating:** …  **Key findings:** - …  **Ruled out:** - …  **Current state:** …

Plain chats become a dated digest: one line per speaker turn, in order.
"""

from __future__ import annotations

import heapq
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from recap_memory.messages import Message
from recap_memory.summarizers.base import Fold, FoldRequest, Style, Summarizer, speaker

STOP_WORDS = frozenset(
    """a an the of to in on at for and or is was were be been it its this that with by from as
    i you he she they we my your her his their our me him them do did does have has had what
    when where who how which would could should will can may might about after before than then
    so if but just am are being there here these those into out up down over also too very
    really oh hey hi wow yeah yes ok okay lol haha totally actually definitely super such much
    some any all both each more most other own same only now well again once
    i'm i've i'll i'd you're you've you'll you'd it's that's there's let's we're we've we'll
    they're they've he's she's what's who's gonna wanna kinda sorta ya
    thanks thank awesome cool glad sounds nice wonderful fantastic""".split()
)
KEEP_WORDS = frozenset({"not", "no", "never", "nothing", "none", "without"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-./:@']*[A-Za-z0-9]|[A-Za-z0-9]")
_NORM = re.compile(r"[^a-z0-9]+")
_RULED_OUT = re.compile(
    r"\b(ruled out|not (the )?(cause|related|responsible|the issue)|unrelated|"
    r"no (errors?|issues?|problems?|change)|isn'?t|wasn'?t|aren'?t|doesn'?t|didn'?t|excluded|"
    r"(looks|is) (fine|normal|healthy))\b",
    re.IGNORECASE,
)
FACT_CHARS = 160
WEIGHT_DIGIT = {"chat": 1.0, "agent": 0.0}
"""Extra weight of words with digits: dates and numbers in chats (tool outputs are full of
numbers that mean little, so agent spans rely on failure words instead)."""
WEIGHT_SIGNAL = {"chat": 0.0, "agent": 1.0}
SIGNAL_WORDS = frozenset(
    """error errors fail failed failure timeout timeouts exceeded exception refused denied
    crash crashed panic fatal critical degraded unavailable rollback deployed changed""".split()
)


SAME_SHAPE_MAX = 2
"""At most this many chosen lines may differ only in their numbers."""
_DIGITS = re.compile(r"\d+")
_SECTION_OF = {"Investigating": "investigating", "Ruled out": "ruled_out"}
"""Sections of a previous summary carried into its update (an old current state is a finding)."""
_NAME_LEAD = re.compile(r"^(?:\[[^\]\n]*\]\n)?(?P<name>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?): ")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_IDENTIFIER = re.compile(
    r"(?=.*\d)(?=.*[A-Za-z_\-])[A-Za-z0-9_\-.@]{3,}|[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+|[A-Z]{3,6}"
)
WEIGHT_IDENTIFIER = {"chat": 0.0, "agent": 6.0}
"""Extra weight of identifiers (ids, codes, dates): what an agent acts on later."""


def identifiers(text: str) -> frozenset[str]:
    """Identifier-like tokens kept whole (``mia_li_3668``, ``HAT136``, ``2024-05-20``,
    ``one_way``, ``JFK``): digits mixed with letters or joined by ``_``/``-``, snake_case
    words, codes in capitals; lowercased."""
    return frozenset(
        token.lower() for token in _TOKEN.findall(text) if _IDENTIFIER.fullmatch(token)
    )


def normalized_words(text: str) -> list[str]:
    """Words as the evaluation compares them: lowercase, a-z and 0-9 only."""
    return _NORM.sub(" ", text.lower()).split()


@dataclass
class _Candidate:
    order: tuple[int, int]
    section: str
    prefix: str
    text: str
    words: frozenset[str]
    ids: frozenset[str] = frozenset()
    """The identifiers among ``words`` (agent spans only)."""

    @property
    def cost(self) -> int:
        return len(self.prefix) + len(self.text) + 2


def terse(text: str) -> str:
    """The sentence without filler and function words (negations, numbers and the month
    May kept) and without a word repeated right after itself."""
    kept: list[str] = []
    for t in _TOKEN.findall(text):
        low = t.lower()
        if kept and low == kept[-1].lower():
            continue  # a word said twice in a row
        if low not in STOP_WORDS or low in KEEP_WORDS or t[0].isdigit() or t == "May":
            kept.append(t)
    return " ".join(kept)


def _sentences(text: str, longest: int = 300) -> Iterator[str]:
    """Sentences (and lines); a very long one comes in pieces of about ``longest`` chars."""
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip()
        while len(piece) > longest:
            split = piece.rfind(" ", longest // 2, longest)
            split = split if split > 0 else longest
            yield piece[:split]
            piece = piece[split:].strip()
        if piece:
            yield piece


def _json_facts(text: str) -> list[str] | None:
    """Tool output that is JSON, as ``key=value`` fact lines (one per top-level item)."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return None
    if not isinstance(data, dict | list):
        return None
    items = data if isinstance(data, list) else [data]
    facts: list[str] = []
    for item in items:
        line = ""
        for key, value in _leaves(item, ""):
            pair = f"{key}={value}" if key and _NUMBER.fullmatch(value) else value
            if line and len(line) + len(pair) > FACT_CHARS:
                facts.append(line)
                line = ""
            line = f"{line}, {pair}" if line else pair
        if line:
            facts.append(line)
    return facts


def _leaves(value: object, key: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, key)
    elif value is not None and value != "":
        yield key, str(value)


class ExtractiveSummarizer(Summarizer):
    """The default strategy (see the module docstring)."""

    name = "extractive"

    async def fold(self, request: FoldRequest) -> Fold:
        """Summarize the span into at most ``request.max_chars`` characters."""
        return Fold(summary=self.summarize(request))

    def summarize(self, request: FoldRequest) -> str:
        """The summary text (synchronous: no I/O is involved)."""
        style = request.style
        candidates = list(self._candidates(request, style))
        if not candidates:
            return ""
        headings = self._headings(style)
        budget = request.max_chars - sum(len(h) + 2 for h in headings.values())
        forced = [
            next((c for c in candidates if c.section == section and c.words), None)
            for section in ("investigating", "state")
        ] + [c for c in candidates if c.section == "header"]
        weights = _weights(candidates, style, _acted_on(request.messages))
        known = frozenset(w for m in request.kept for w in normalized_words(m.countable_text))
        if style == "agent":
            known |= {t for m in request.kept for t in identifiers(m.countable_text)}
        chosen = _select(candidates, budget, weights, forced, known)
        text = self._render(chosen, headings)
        while len(text) > request.max_chars and chosen:
            chosen.pop()  # the candidate chosen last added the least: the layout's overhead
            text = self._render(chosen, headings)
        return text

    @staticmethod
    def _headings(style: Style) -> dict[str, str]:
        if style == "chat":
            return {}
        return {
            "investigating": "**Investigating:**",
            "finding": "**Key findings:**",
            "ruled_out": "**Ruled out:**",
            "state": "**Current state:**",
        }

    def _candidates(self, request: FoldRequest, style: Style) -> Iterator[_Candidate]:
        if request.previous:
            for j, line in enumerate(request.previous.splitlines()):
                heading, text = "", line.strip().lstrip("-").strip()
                if text.startswith("**") and ":**" in text:
                    heading, text = text[2:].split(":**", 1)
                    text = text.strip()
                if text:
                    section = "chat" if style == "chat" else _SECTION_OF.get(heading, "finding")
                    yield self._make((-1, j), section, "", text, style)
        last_assistant = max(
            (i for i, m in enumerate(request.messages) if m.role == "assistant" and m.text),
            default=-1,
        )
        for i, message in enumerate(request.messages):
            for j, (section, prefix, text) in enumerate(
                self._pieces(message, style, i == last_assistant)
            ):
                yield self._make((i, j), section, prefix, text, style)

    @staticmethod
    def _make(
        order: tuple[int, int], section: str, prefix: str, text: str, style: Style
    ) -> _Candidate:
        short = terse(text) if not text.startswith("called ") else text
        ids = identifiers(short) if style == "agent" else frozenset()
        return _Candidate(
            order, section, prefix, short, frozenset(normalized_words(short)) | ids, ids
        )

    @staticmethod
    def _pieces(message: Message, style: Style, last: bool) -> Iterator[tuple[str, str, str]]:
        if style == "chat":
            who, text = _named_speaker(message)
            for sentence in _sentences(text):
                header = sentence.startswith("[") and sentence.endswith("]")
                yield ("header", "", sentence) if header else ("chat", f"{who}: ", sentence)
            return
        if message.role == "tool":
            facts = _json_facts(message.text)
            name = message.name or "tool"
            for fact in facts if facts is not None else _sentences(message.text):
                yield "finding", f"{name}: ", fact
            return
        for call in message.tool_calls:
            yield "finding", "", f"called {call.name}({_compact_args(call.arguments)})"
        for sentence in _sentences(message.text):
            if message.role == "user":
                yield "investigating", "", sentence
            elif last:
                yield "state", "", sentence
            elif _RULED_OUT.search(sentence):
                yield "ruled_out", "", sentence
            else:
                yield "finding", "", sentence

    @staticmethod
    def _render(chosen: Sequence[_Candidate], headings: dict[str, str]) -> str:
        if not headings:
            return "\n".join(_joined_lines(chosen))
        blocks = []
        for section, heading in headings.items():
            items = [c for c in chosen if c.section == section]
            if not items:
                continue
            if section in ("finding", "ruled_out"):
                body = "\n".join(f"- {line}" for line in _joined_lines(items))
                blocks.append(f"{heading}\n{body}")
            else:
                blocks.append(f"{heading} " + "; ".join(_joined_lines(items)))
        return "\n".join(blocks)


def _named_speaker(message: Message) -> tuple[str, str]:
    """The author and text of a chat message; a transcript's own ``Name: `` lead (after
    an optional first line in brackets) names the author better than the role does."""
    text = message.text
    match = _NAME_LEAD.match(text)
    if match is None:
        return speaker(message), text
    return match["name"], text[: match.start("name")] + text[match.end() :]


def _compact_args(arguments: str) -> str:
    try:
        data = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(data, dict):
        return ", ".join(
            f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in data.items()
        )
    return arguments


def _joined_lines(chosen: Sequence[_Candidate]) -> list[str]:
    """Chosen candidates in order, consecutive pieces of one message on one line."""
    lines: list[str] = []
    previous: tuple[int, str] | None = None
    for c in sorted(chosen, key=lambda c: c.order):
        key = (c.order[0], c.prefix)
        if key == previous and lines:
            lines[-1] += f"; {c.text}"
        else:
            lines.append(f"{c.prefix}{c.text}")
        previous = key
    return lines


def _acted_on(messages: Sequence[Message]) -> frozenset[str]:
    """Identifiers the user gave or the agent passed to a tool: the task's own entities."""
    found: set[str] = set()
    for message in messages:
        if message.role == "user":
            found |= identifiers(message.text)
        for call in message.tool_calls:
            found |= identifiers(call.arguments)
    return frozenset(found)


def _weights(
    candidates: Sequence[_Candidate], style: Style, acted_on: frozenset[str] = frozenset()
) -> dict[str, float]:
    """Every content word counts; numbers and dates (chats) or failure words and
    identifiers (agents) more, most of all the identifiers the task acted on."""
    ids = {w for c in candidates for w in c.ids}
    weights = {}
    for word in {w for c in candidates for w in c.words}:
        weight = 1.0
        if any(ch.isdigit() for ch in word):
            weight += WEIGHT_DIGIT[style]
        if word in SIGNAL_WORDS:
            weight += WEIGHT_SIGNAL[style]
        if word in ids:
            weight += WEIGHT_IDENTIFIER[style] * (2 if word in acted_on else 1)
        if word in STOP_WORDS:
            weight = 0.1
        weights[word] = weight
    return weights


def _select(
    candidates: Sequence[_Candidate],
    budget: int,
    weights: dict[str, float],
    forced: Sequence[_Candidate | None] = (),
    known: frozenset[str] = frozenset(),
) -> list[_Candidate]:
    """Greedy weighted set cover under a size budget (lazy evaluation).

    ``known`` words are covered from the start: the model reads them anyway.

    ``forced`` candidates (the request being worked on, the current state, session
    headers) are taken first when each costs at most a quarter of the budget and all
    together half of it, so the template's sections are never empty and the facts
    still get most of a tight budget.
    """
    covered: set[str] = set(known)
    chosen: list[_Candidate] = []
    lines: set[tuple[int, str]] = set()  # (message, prefix) of the lines begun
    used = 0

    def cost(c: _Candidate) -> int:
        """A piece of a message whose line is begun costs its text and ``"; "`` only."""
        return len(c.text) + 2 if (c.order[0], c.prefix) in lines else c.cost

    taken: set[int] = set()

    def take(c: _Candidate) -> None:
        nonlocal used
        taken.add(id(c))
        chosen.append(c)
        covered.update(c.words)
        used += cost(c)
        lines.add((c.order[0], c.prefix))

    for candidate in forced:
        if (
            candidate is not None
            and used + cost(candidate) <= budget // 2
            and cost(candidate) <= budget // 4
        ):
            take(candidate)

    shapes = Counter(_shape(c.text) for c in chosen)

    def gain(c: _Candidate) -> float:
        return sum(weights[w] for w in c.words - covered) / cost(c)

    heap = [(-gain(c), n) for n, c in enumerate(candidates) if c.words]
    heapq.heapify(heap)
    while heap and used < budget:
        _, n = heapq.heappop(heap)
        candidate = candidates[n]
        fresh = gain(candidate)
        if fresh <= 0:
            continue
        if heap and fresh < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-fresh, n))
            continue
        if used + cost(candidate) > budget or id(candidate) in taken:
            continue
        if shapes[shape := _shape(candidate.text)] >= SAME_SHAPE_MAX:
            continue  # the 3rd line that differs only in its numbers: log noise
        shapes[shape] += 1
        take(candidate)
    return chosen


def _shape(text: str) -> str:
    """The text with its numbers blanked: near-identical log lines share one shape."""
    return _DIGITS.sub("#", text)
