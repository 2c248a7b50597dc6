"""LoCoMo conversations as chat histories, and answer retention after compaction.

Figures per QA category and by where the evidence lies: ``compacted`` (some
evidence turn was folded into the summary) or ``kept`` (all of it is verbatim).
Reference rows: the whole conversation, the newest turns alone at the same
size, and LoCoMo's shipped GPT-3.5 session summaries (each with its date).

Conversion (as in the data's README): each turn is one message, ``speaker_a``
as ``user`` and ``speaker_b`` as ``assistant``, content ``"<Speaker>: <text>"``
plus ``" (shares a photo: <caption>)"``; the first turn of each session starts
with ``"[Session of <date>]\\n"``. Category 5 (adversarial) is left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recap_memory.compactor import Compactor
from recap_memory.errors import InputError
from recap_memory.eval import records_with
from recap_memory.eval.budget import compact_to_budget, foldable_chars
from recap_memory.eval.readability import summary_readable
from recap_memory.eval.retention import Context
from recap_memory.messages import Message

_SESSION = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"D\d+:\d+")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def looks_like_locomo(data: Any) -> bool:
    """Whether parsed JSON has LoCoMo's shape (records with ``conversation`` and ``qa``)."""
    return records_with(data, {"conversation", "qa"})


def conversation_messages(sample: Mapping[str, Any]) -> list[Message]:
    """One LoCoMo sample's dialogue as chat messages (see the module docstring)."""
    conv = sample["conversation"]
    roles = {conv["speaker_a"]: "user", conv["speaker_b"]: "assistant"}
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)) and conv[key]
    )
    messages = []
    for number, key in sessions:
        for n, turn in enumerate(conv[key]):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" (shares a photo: {turn['blip_caption']})"
            if n == 0:
                text = f"[Session of {conv[f'session_{number}_date_time']}]\n{text}"
            role = roles.get(turn["speaker"])
            if role is None:
                raise InputError(f"unknown speaker {turn['speaker']!r}", where=f"{key}")
            messages.append(Message(role=role, content=text, id=turn.get("dia_id")))
    return messages


@dataclass(frozen=True)
class Tally:
    """Exact and token-recall sums over some questions."""

    exact: float = 0.0
    token_recall: float = 0.0
    questions: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.exact + other.exact,
            self.token_recall + other.token_recall,
            self.questions + other.questions,
        )

    def means(self) -> dict[str, float | int]:
        """Mean exact and token recall, and the question count."""
        n = self.questions or 1
        return {
            "exact": self.exact / n,
            "token_recall": self.token_recall / n,
            "questions": self.questions,
        }


@dataclass(frozen=True)
class Score:
    """Retention of one or more contexts (questions pooled)."""

    all: Tally
    by_category: dict[str, Tally]
    by_evidence: dict[str, Tally]
    sizes: tuple[float, ...] = field(default=())
    not_compacted: int = 0
    readability: tuple[float, ...] = field(default=())
    """The readable share of each summary (see :mod:`recap_memory.eval.readability`)."""

    @property
    def token_recall(self) -> float:
        """Mean token recall over all questions."""
        return self.all.token_recall / (self.all.questions or 1)

    @property
    def exact(self) -> float:
        """Share of answers found exactly."""
        return self.all.exact / (self.all.questions or 1)

    @property
    def questions(self) -> int:
        """Questions scored (category 5 excluded)."""
        return self.all.questions

    @property
    def readable(self) -> float:
        """Mean readable share of the summaries (1.0 when none was written)."""
        return sum(self.readability) / len(self.readability) if self.readability else 1.0

    @property
    def size(self) -> float:
        """Mean context size as a share of the conversation."""
        return sum(self.sizes) / len(self.sizes) if self.sizes else 0.0

    def __add__(self, other: Score) -> Score:
        return Score(
            self.all + other.all,
            _merge(self.by_category, other.by_category),
            _merge(self.by_evidence, other.by_evidence),
            self.sizes + other.sizes,
            self.not_compacted + other.not_compacted,
            self.readability + other.readability,
        )

    def as_dict(self) -> dict[str, Any]:
        """Means as plain data."""
        return {
            "size": self.size,
            **self.all.means(),
            "readable": self.readable,
            "not_compacted": self.not_compacted,
            "by_category": {k: v.means() for k, v in self.by_category.items()},
            "by_evidence": {k: v.means() for k, v in self.by_evidence.items()},
        }


def _merge(a: Mapping[str, Tally], b: Mapping[str, Tally]) -> dict[str, Tally]:
    return {k: a.get(k, Tally()) + b.get(k, Tally()) for k in sorted({*a, *b})}


def score(
    sample: Mapping[str, Any],
    context_text: str,
    size: float,
    folded_ids: frozenset[str | int] = frozenset(),
    *,
    only_evidence_in: frozenset[str] | None = None,
) -> Score:
    """Answer retention of ``context_text`` for the sample's questions (with
    ``only_evidence_in``, those whose evidence turns all lie among these ids)."""
    context = Context(context_text)
    total = Tally()
    categories: defaultdict[str, Tally] = defaultdict(Tally)
    evidence: defaultdict[str, Tally] = defaultdict(Tally)
    for qa in _questions(sample):
        turns = _EVIDENCE.findall(" ".join(map(str, qa.get("evidence", []))))
        if only_evidence_in is not None and not (turns and set(turns) <= only_evidence_in):
            continue
        recall = context.token_recall(str(qa["answer"]))
        if recall is None:
            continue
        tally = Tally(float(context.exact(str(qa["answer"]))), recall, 1)
        total += tally
        categories[CATEGORIES.get(qa["category"], str(qa["category"]))] += tally
        evidence["compacted" if folded_ids & set(turns) else "kept"] += tally
    return Score(total, dict(categories), dict(evidence), (size,))


def _questions(sample: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for qa in sample["qa"]:
        if qa.get("category") != 5 and "answer" in qa:
            yield qa


def _text(messages: Sequence[Message]) -> str:
    return "\n".join(m.text for m in messages)


def evaluate(
    samples: Sequence[Mapping[str, Any]],
    compactor: Compactor,
    budget: float = 0.2,
    keep_share: float = 0.5,
    advance: Callable[[], None] = lambda: None,
) -> Score:
    """Retention over ``samples`` after compacting each once to ``budget``."""
    scores = []
    for sample in samples:
        messages = conversation_messages(sample)
        out = compact_to_budget(messages, compactor, budget, keep_share)
        scored = score(sample, _text(out.messages), out.size, out.folded_ids)
        scores.append(
            replace(
                scored,
                not_compacted=int(not out.compacted),
                readability=summary_readability(out.messages, _text(messages)),
            )
        )
        advance()
    return sum(scores[1:], scores[0])


def references(samples: Sequence[Mapping[str, Any]], budget: float) -> dict[str, Score]:
    """The reference rows: whole conversation, newest turns only, GPT-3.5 summaries."""
    rows: dict[str, list[Score]] = defaultdict(list)
    for sample in samples:
        messages = conversation_messages(sample)
        whole = foldable_chars(messages)
        rows["whole conversation"].append(score(sample, _text(messages), 1.0))
        tail = newest_messages(messages, int(whole * budget))
        folded = _ids(messages[: len(messages) - len(tail)])
        rows[f"newest {budget:.0%} only"].append(
            score(sample, _text(tail), foldable_chars(tail) / whole, folded)
        )
        summaries = session_summaries(sample)
        rows["LoCoMo GPT-3.5 session summaries"].append(
            score(sample, summaries, len(summaries) / whole, _ids(messages))
        )
    return {name: sum(s[1:], s[0]) for name, s in rows.items()}


def summary_readability(messages: Sequence[Message], conversation: str) -> tuple[float, ...]:
    """The readable share of the summary among ``messages`` (none when there is none)."""
    share = summary_readable(messages, conversation)
    return () if share is None else (share,)


def _ids(messages: Sequence[Message]) -> frozenset[str | int]:
    return frozenset(m.id for m in messages if m.id is not None)


def newest_messages(messages: Sequence[Message], chars: int) -> list[Message]:
    """The newest messages whose characters reach ``chars`` (a reference row)."""
    kept: list[Message] = []
    total = 0
    for message in reversed(messages):
        if total >= chars:
            break
        kept.append(message)
        total += len(message.text)
    return kept[::-1]


def session_summaries(sample: Mapping[str, Any]) -> str:
    """LoCoMo's GPT-3.5 summaries, each after its session's date."""
    conv = sample["conversation"]
    parts = []
    for key, text in sorted(
        sample.get("session_summary", {}).items(), key=lambda kv: int(re.sub(r"\D", "", kv[0]))
    ):
        number = re.sub(r"\D", "", key)
        parts.append(f"[Session of {conv.get(f'session_{number}_date_time', '?')}]\n{text}")
    return "\n".join(parts)
