"""The ``extractive`` strategy: the embedded default, no model, deterministic.

It keeps what later questions need — names, numbers, dates, identifiers,
decisions, what was ruled out — by choosing, under the size cap, the pieces of
the conversation that cover the most informative words not yet covered (a
greedy weighted set cover, near-optimal for this kind of objective). A piece is
a whole sentence or clause in the conversation's own words, never rewritten;
chosen pieces keep their speaker and date and stay in their original order
(the layout is :mod:`recap_memory.summarizers.layout`). Repeated log lines are
collapsed to one line with a count and the range of their numbers.

An update folds the previous summary's pieces and the new span's together, and
weighs them fairly: the previous summary may keep the share of the budget that
the conversation it stands for has in all that is folded, so the hundredth pass
keeps early names, ids and decisions in proportion instead of dropping them
wholesale for the newest span.
"""

from __future__ import annotations

import asyncio
import heapq
import math
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Executor

from recap_memory.messages import Message
from recap_memory.summarizers.base import Fold, FoldRequest, Style, Summarizer
from recap_memory.summarizers.layout import (
    Layout,
    LineKey,
    Piece,
    parse_previous,
    pieces_of,
    render,
)
from recap_memory.summarizers.text import words
from recap_memory.summarizers.tool_output import identifiers
from recap_memory.summarizers.validation import is_repetitive

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
COMMON_SHARE = 0.08
"""A word found in more than this share of the pieces (of 25 or more) is common in this
conversation, whatever its language, and weighs little."""
WEIGHT_DIGIT = {"chat": 1.0, "agent": 0.0}
"""Extra weight of words with digits: dates and numbers in chats (tool outputs are full of
numbers that mean little, so agent spans rely on failure words instead)."""
WEIGHT_SIGNAL = {"chat": 0.0, "agent": 1.0}
SIGNAL_WORDS = frozenset(
    """error errors fail failed failure timeout timeouts exceeded exception refused denied
    crash crashed panic fatal critical degraded unavailable rollback deployed changed""".split()
)
WEIGHT_NAME = {"chat": 2.0, "agent": 0.0}
"""Extra weight of capitalized words inside a sentence (names, places, titles) in chats."""
QUESTION_FACTOR = 0.3
"""A piece that asks (ends with a question mark), or says too little to read on its own
(fewer than four words), tells little: its gain counts this much."""
WEIGHT_IDENTIFIER = {"chat": 0.0, "agent": 6.0}
"""Extra weight of identifiers (ids, codes, dates): what an agent acts on later."""
SAME_SHAPE_MAX = 2
"""At most this many chosen pieces may differ only in their numbers and ids."""
FORCED_SHARE = 4
"""A forced piece (the request, the current state) costs at most 1/this of the budget."""


class ExtractiveSummarizer(Summarizer):
    """The default strategy (see the module docstring)."""

    name = "extractive"
    reads_record = True

    executor: Executor | None = None
    """What runs :meth:`summarize`: a worker thread when None."""

    def __init__(self, executor: Executor | None = None) -> None:
        self.executor = executor

    def running_on(self, executor: Executor) -> ExtractiveSummarizer:
        """The extractive strategy summarizing on ``executor`` (a process pool)."""
        return ExtractiveSummarizer(executor)

    async def fold(self, request: FoldRequest) -> Fold:
        """Summarize the span into at most ``request.max_chars`` characters, off the event
        loop: a long span takes seconds of CPU, which must not stall it (a server answers
        other requests meanwhile)."""
        if self.executor is None:
            return Fold(summary=await asyncio.to_thread(self.summarize, request))
        loop = asyncio.get_running_loop()
        return Fold(summary=await loop.run_in_executor(self.executor, summarize, request))

    def summarize(self, request: FoldRequest) -> str:
        """The summary text (synchronous: no I/O is involved)."""
        style = request.style
        layout = Layout(style)
        if request.record:  # a fresh pass over the raw record and the span
            old: list[Piece] = []
            group = ""
            new = list(pieces_of([*request.record, *request.messages], style))
        else:
            old, group = parse_previous(request.previous or "", style)
            new = list(pieces_of(request.messages, style, group=group))
        last_group = new[-1].group if new else group
        candidates = [*old, *new]
        if not candidates:
            return ""
        budget = request.max_chars - layout.fixed_cost() - (len(last_group) + 1)
        weights = _weights(candidates, style, _acted_on([*request.record, *request.messages]))
        known = frozenset(w for m in request.kept for w in words(m.countable_text))
        quota = _previous_quota(request, old, budget)
        forced = [p for p in layout.forced(new) if p.cost_alone() <= budget // FORCED_SHARE]
        chosen = Selection(layout, budget, weights, known, quota).run(candidates, forced)
        text = render(chosen, layout, trailing_group=last_group)
        while len(text) > request.max_chars and chosen:
            chosen.pop()  # the piece chosen last added the least
            text = render(chosen, layout, trailing_group=last_group)
        if len(text) > request.max_chars:
            text = render(chosen, layout)
        while is_repetitive(text) and chosen:  # never write what the validator rejects
            commonest = Counter(p.shape for p in chosen).most_common(1)[0][0]
            drop = max(n for n, p in enumerate(chosen) if p.shape == commonest)
            chosen.pop(drop)
            text = render(chosen, layout)
        return text


def summarize(request: FoldRequest) -> str:
    """:meth:`ExtractiveSummarizer.summarize` as a plain function (what a process pool runs)."""
    return ExtractiveSummarizer().summarize(request)


def _previous_quota(request: FoldRequest, old: Sequence[Piece], budget: int) -> int | None:
    """How much of ``budget`` the previous summary's pieces may take: the share of the
    folded conversation they stand for (all of it when that size is unknown)."""
    if not old:
        return None
    new_chars = sum(len(m.countable_text) for m in request.messages)
    old_chars = request.previous_chars or 0
    if old_chars <= 0:
        return None
    return int(budget * old_chars / (old_chars + new_chars))


class Selection:
    """Greedy weighted set cover under a size budget, with lazy gain updates.

    ``known`` words are covered from the start (the model reads them anyway).
    ``quota`` caps what the previous summary's pieces take (None: no cap); what a
    side leaves unused goes to the other at the end. Forced pieces are taken first
    while together they use at most half the budget.
    """

    def __init__(
        self,
        layout: Layout,
        budget: int,
        weights: dict[str, float],
        known: frozenset[str],
        quota: int | None,
    ) -> None:
        self.layout = layout
        self.budget = budget
        self.weights = weights
        self.covered: set[str] = set(known)
        self.quota = quota
        self.chosen: list[Piece] = []
        self.lines: set[LineKey] = set()
        self.groups: set[str] = set()
        self.used = 0
        self.used_old = 0
        self.shapes: Counter[str] = Counter()

    def run(self, candidates: Sequence[Piece], forced: Sequence[Piece]) -> list[Piece]:
        """The chosen pieces, in the order they were chosen."""
        for piece in forced:
            if self.used + self._cost(piece) <= self.budget // 2:
                self._take(piece)
        self._greedy(candidates, capped=True)
        if self.quota is not None:
            self._greedy(candidates, capped=False)  # a side's unused share goes to the other
        return self.chosen

    def _cost(self, piece: Piece) -> int:
        return self.layout.cost(piece, self.lines, self.groups)

    def _gain(self, piece: Piece) -> float:
        gain = math.fsum(self.weights[w] for w in piece.words - self.covered) / self._cost(piece)
        return gain * QUESTION_FACTOR if piece.asks or piece.slight else gain

    def _take(self, piece: Piece) -> None:
        cost = self._cost(piece)
        self.used += cost
        if piece.previous:
            self.used_old += cost
        self.chosen.append(piece)
        self.lines.add(piece.line)
        self.groups.add(piece.group)
        self.covered.update(piece.words)
        self.shapes[piece.shape] += 1

    def _fits(self, piece: Piece, cost: int, capped: bool) -> bool:
        if self.used + cost > self.budget:
            return False
        if not capped or self.quota is None:
            return True
        if piece.previous:
            return self.used_old + cost <= self.quota
        return (self.used - self.used_old) + cost <= self.budget - self.quota

    def _greedy(self, candidates: Sequence[Piece], *, capped: bool) -> None:
        taken = {id(p) for p in self.chosen}
        heap = [
            (-self._gain(p), n) for n, p in enumerate(candidates) if p.words and id(p) not in taken
        ]
        heapq.heapify(heap)
        while heap and self.used < self.budget:
            _, n = heapq.heappop(heap)
            piece = candidates[n]
            fresh = self._gain(piece)
            if fresh <= 0:
                continue
            if heap and fresh < -heap[0][0] - 1e-12:
                heapq.heappush(heap, (-fresh, n))
                continue
            if not self._fits(piece, self._cost(piece), capped):
                continue
            if self.shapes[piece.shape] >= SAME_SHAPE_MAX:
                continue  # the 3rd piece that differs only in its numbers: log noise
            self._take(piece)


def _acted_on(messages: Sequence[Message]) -> frozenset[str]:
    """Identifiers the user gave or the agent passed to a tool: the task's own entities."""
    found: set[str] = set()
    for message in messages:
        if message.role == "user":
            found |= identifiers(message.text)
        for call in message.tool_calls:
            found |= identifiers(call.arguments)
    return frozenset(found)


def _document_frequency(candidates: Sequence[Piece]) -> Counter[str]:
    return Counter(w for p in candidates for w in p.words)


def _weights(
    candidates: Sequence[Piece], style: Style, acted_on: frozenset[str] = frozenset()
) -> dict[str, float]:
    """Every content word counts; numbers and dates (chats) or failure words and
    identifiers (agents) more, most of all the identifiers the task acted on, and names
    (capitalized inside a sentence) in chats; function
    words, and words common all over this conversation, little."""
    frequency = _document_frequency(candidates)
    common = COMMON_SHARE * len(candidates) if len(candidates) >= 25 else float("inf")
    ids = {w for p in candidates for w in p.ids}
    names = {w for p in candidates for w in p.names}
    weights = {}
    for word, count in frequency.items():
        weight = 1.0
        if any(ch.isdigit() for ch in word):
            weight += WEIGHT_DIGIT[style]
        if word in SIGNAL_WORDS:
            weight += WEIGHT_SIGNAL[style]
        if word in ids:
            weight += WEIGHT_IDENTIFIER[style] * (2 if word in acted_on else 1)
        if word in names:
            weight += WEIGHT_NAME[style]
        if word in STOP_WORDS or (count > common and word not in ids):
            weight = 0.1
        weights[word] = weight
    return weights
