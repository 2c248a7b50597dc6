"""LoCoMo conversations as chat histories, and answer retention after compaction.

Conversion (as in the data's README): each turn is one message, ``speaker_a``
as ``user`` and ``speaker_b`` as ``assistant``, content ``"<Speaker>: <text>"``
plus ``" (shares a photo: <caption>)"``; the first turn of each session starts
with ``"[Session of <date>]\\n"``. Category 5 (adversarial) is left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recap.compactor import Compactor
from recap.errors import InputError
from recap.eval.retention import Context
from recap.messages import Message
from recap.policy import Budget, Policy, Trigger
from recap.summarizers.base import Summarizer

_SESSION = re.compile(r"^session_(\d+)$")


def looks_like_locomo(data: Any) -> bool:
    """Whether parsed JSON has LoCoMo's shape."""
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], Mapping)
        and {"conversation", "qa"} <= data[0].keys()
    )


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
class Score:
    """Retention figures for one context."""

    size: float
    exact: float
    token_recall: float
    questions: int
    by_category: dict[int, tuple[float, float, int]]


def score(sample: Mapping[str, Any], context_text: str, whole_chars: int) -> Score:
    """Answer retention of ``context_text`` for the sample's questions."""
    context = Context(context_text)
    per: dict[int, list[tuple[bool, float]]] = defaultdict(list)
    for qa in _questions(sample):
        recall = context.token_recall(str(qa["answer"]))
        if recall is None:
            continue
        per[qa["category"]].append((context.exact(str(qa["answer"])), recall))
    rows = [r for items in per.values() for r in items]
    return Score(
        size=len(context_text) / whole_chars,
        exact=sum(e for e, _ in rows) / len(rows),
        token_recall=sum(r for _, r in rows) / len(rows),
        questions=len(rows),
        by_category={
            c: (sum(e for e, _ in v) / len(v), sum(r for _, r in v) / len(v), len(v))
            for c, v in sorted(per.items())
        },
    )


def _questions(sample: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for qa in sample["qa"]:
        if qa.get("category") != 5 and "answer" in qa:
            yield qa


def compact_to_budget(
    messages: Sequence[Message], summarizer: Summarizer, keep: float, summary_max: float
) -> list[Message]:
    """Compact once, keeping ``keep`` and summarizing into ``summary_max`` of the characters."""
    whole = sum(len(m.text) for m in messages)
    policy = Policy(
        trigger=Trigger(chars=max(1, whole - 1)),
        keep=Budget(chars=int(whole * keep)),
        summary_max=Budget(chars=int(whole * summary_max)),
    )
    result = Compactor(summarizer, policy).compact_sync(messages)
    if not result.report.compacted:
        raise RuntimeError(f"compaction did not happen: {result.report.reason}")
    return result.messages


def evaluate(
    samples: Sequence[Mapping[str, Any]],
    summarizer: Summarizer,
    *,
    keep: float = 0.1,
    summary_max: float = 0.1,
) -> Score:
    """Mean retention over ``samples`` (question-weighted) after one compaction each."""
    scores = []
    for sample in samples:
        messages = conversation_messages(sample)
        whole = "\n".join(m.text for m in messages)
        view = compact_to_budget(messages, summarizer, keep, summary_max)
        scores.append(score(sample, "\n".join(m.text for m in view), len(whole)))
    return _pool(scores)


def _pool(scores: Sequence[Score]) -> Score:
    total = sum(s.questions for s in scores)
    cats: dict[int, list[tuple[float, float, int]]] = defaultdict(list)
    for s in scores:
        for c, v in s.by_category.items():
            cats[c].append(v)
    return Score(
        size=sum(s.size for s in scores) / len(scores),
        exact=sum(s.exact * s.questions for s in scores) / total,
        token_recall=sum(s.token_recall * s.questions for s in scores) / total,
        questions=total,
        by_category={
            c: (
                sum(e * n for e, _, n in v) / sum(n for *_, n in v),
                sum(r * n for _, r, n in v) / sum(n for *_, n in v),
                sum(n for *_, n in v),
            )
            for c, v in sorted(cats.items())
        },
    )
