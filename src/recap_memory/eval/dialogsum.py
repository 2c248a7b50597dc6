"""DialogSum dialogues: how close a strategy's summary comes to a human's.

Each dialogue (``#Person1#: …`` lines) becomes chat messages (Person1 as
``user``, everyone else as ``assistant``, each line kept as ``Person1: …``) and
is summarized whole into at most ``budget`` of its characters. The score is
ROUGE-1/2/L F1 (``rouge-score``, Porter stemming) against the reference
summary. Reference row: the dialogue's opening at the same length (lead).
Strategies that write no summary (masking) have no row here; a summary the
strategy fails to write (an error, a rejected answer) scores zero and is counted.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recap_memory.errors import InputError, RecapError
from recap_memory.messages import Message
from recap_memory.summarizers.base import FoldRequest, Summarizer

_TURN = re.compile(r"^#(?P<who>[^#]+)#:\s*(?P<text>.*)$")
MEASURES = ("rouge1", "rouge2", "rougeL")


def parse(text: str) -> list[dict[str, Any]]:
    """The records of a DialogSum JSON-lines file."""
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InputError(f"not JSON: {exc}", where=f"line {number}") from exc
        if not isinstance(record, dict) or not {"dialogue", "summary"} <= record.keys():
            raise InputError("a record needs dialogue and summary", where=f"line {number}")
        records.append(record)
    return records


def looks_like_dialogsum(text: str) -> bool:
    """Whether the file's first line is a DialogSum record."""
    first = text.lstrip().split("\n", 1)[0]
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and {"dialogue", "summary"} <= record.keys()


def dialogue_messages(record: Mapping[str, Any]) -> list[Message]:
    """One dialogue as chat messages (see the module docstring)."""
    messages = []
    for line in str(record["dialogue"]).splitlines():
        match = _TURN.match(line.strip())
        if match is None:
            continue
        who = match["who"].strip()
        role = "user" if who == "Person1" else "assistant"
        messages.append(Message(role=role, content=f"{who}: {match['text']}"))
    return messages


@dataclass(frozen=True)
class RougeScore:
    """Mean ROUGE F1 per measure over the dialogues scored."""

    f1: dict[str, float]
    dialogues: int
    size: float
    failed: int = 0
    """Dialogues the strategy wrote no summary for (scored zero)."""

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain data."""
        return {**self.f1, "dialogues": self.dialogues, "size": self.size, "failed": self.failed}


def _mean(
    records: Sequence[Mapping[str, Any]],
    summary_of: Callable[[Mapping[str, Any], int], str | None],
    budget: float,
    advance: Callable[[], None],
) -> RougeScore:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer(list(MEASURES), use_stemmer=True)
    totals = dict.fromkeys(MEASURES, 0.0)
    sizes = 0.0
    failed = 0
    for record in records:
        dialogue = "\n".join(m.text for m in dialogue_messages(record))
        cap = max(1, int(len(dialogue) * budget))
        summary = summary_of(record, cap)
        if summary is None:
            failed += 1
            summary = ""
        scores = scorer.score(str(record["summary"]), summary)
        for measure in MEASURES:
            totals[measure] += scores[measure].fmeasure
        sizes += len(summary) / max(1, len(dialogue))
        advance()
    n = max(1, len(records))
    return RougeScore({k: v / n for k, v in totals.items()}, len(records), sizes / n, failed)


def evaluate(
    records: Sequence[Mapping[str, Any]],
    summarizer: Summarizer,
    budget: float = 0.2,
    advance: Callable[[], None] = lambda: None,
) -> RougeScore:
    """ROUGE of ``summarizer``'s summaries of whole dialogues, capped at ``budget``."""

    def summary_of(record: Mapping[str, Any], cap: int) -> str | None:
        request = FoldRequest(dialogue_messages(record), cap)
        try:
            return asyncio.run(summarizer.fold(request)).summary
        except RecapError:
            return None

    return _mean(records, summary_of, budget, advance)


def lead(records: Sequence[Mapping[str, Any]], budget: float) -> RougeScore:
    """The reference row: the dialogue's first ``budget`` of characters."""

    def opening(record: Mapping[str, Any], cap: int) -> str:
        return "\n".join(m.text for m in dialogue_messages(record))[:cap]

    return _mean(records, opening, budget, lambda: None)
