"""τ-bench airline trajectories as chat histories, and how many IDs a context keeps.

*ID/value recall*: the share of the ground-truth action arguments (every leaf
value of ``info.task.actions[*].kwargs`` written as text, 3+ characters: user
ids, reservation ids, flight numbers, dates, names, amounts) that still occur,
case-insensitively, in what the model would read (message text and tool-call
arguments). Trajectories whose task has no such value are left out of it.
*valid*: the share of contexts in which every tool result still follows its call.
Reference rows: the whole trajectory, and its last messages alone (the same share
of the messages as the budget's share of the characters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recap_memory.compactor import Compactor
from recap_memory.eval import records_with
from recap_memory.eval.budget import compact_to_budget, foldable_chars
from recap_memory.messages import Message, is_valid_history, parse_messages

MIN_VALUE_CHARS = 3


def looks_like_taubench(data: Any) -> bool:
    """Whether parsed JSON has τ-bench's shape (records with ``traj`` and ``info``)."""
    return records_with(data, {"traj", "info"})


def trajectory_messages(record: Mapping[str, Any]) -> list[Message]:
    """One record's trajectory as validated messages (OpenAI chat format)."""
    where = f"task {record.get('task_id')} trial {record.get('trial')}"
    return parse_messages(record["traj"], source=where)


def action_values(record: Mapping[str, Any]) -> list[str]:
    """The ground-truth actions' argument values of 3+ characters, in order, deduplicated."""
    actions = record.get("info", {}).get("task", {}).get("actions", [])
    values = (str(v) for a in actions for v in _leaves(a.get("kwargs", {})))
    return list(dict.fromkeys(v for v in values if len(v) >= MIN_VALUE_CHARS))


def _leaves(value: object) -> Iterator[object]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value


def readable_text(messages: Sequence[Message]) -> str:
    """What the model reads of ``messages``: text, reasoning and tool calls."""
    return "\n".join(m.countable_text for m in messages)


def value_recall(values: Sequence[str], messages: Sequence[Message]) -> float | None:
    """Share of ``values`` present in ``messages`` (None without values)."""
    if not values:
        return None
    text = readable_text(messages).lower()
    return sum(v.lower() in text for v in values) / len(values)


@dataclass(frozen=True)
class TauScore:
    """ID/value recall and valid histories over some trajectories."""

    recalls: tuple[float, ...] = ()
    valid: tuple[bool, ...] = ()
    sizes: tuple[float, ...] = ()
    not_compacted: int = 0
    model_input_tokens: int = field(default=0)

    @property
    def recall(self) -> float:
        """Mean ID/value recall."""
        return sum(self.recalls) / len(self.recalls) if self.recalls else 0.0

    @property
    def valid_rate(self) -> float:
        """Share of contexts that are valid histories."""
        return sum(self.valid) / len(self.valid) if self.valid else 0.0

    @property
    def size(self) -> float:
        """Mean size as a share of the foldable characters."""
        return sum(self.sizes) / len(self.sizes) if self.sizes else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain data."""
        return {
            "size": self.size,
            "id_value_recall": self.recall,
            "valid_histories": self.valid_rate,
            "trajectories": len(self.valid),
            "with_values": len(self.recalls),
            "not_compacted": self.not_compacted,
            "model_input_tokens": self.model_input_tokens,
        }


def _scored(
    records: Sequence[Mapping[str, Any]],
    context: Callable[[list[Message]], tuple[list[Message], bool, int]],
    advance: Callable[[], None] = lambda: None,
) -> TauScore:
    recalls, valid, sizes = [], [], []
    skipped = tokens = 0
    for record in records:
        messages = trajectory_messages(record)
        view, compacted, used = context(messages)
        skipped += not compacted
        tokens += used
        valid.append(is_valid_history(view))
        sizes.append(foldable_chars(view) / (foldable_chars(messages) or 1))
        recall = value_recall(action_values(record), view)
        if recall is not None:
            recalls.append(recall)
        advance()
    return TauScore(tuple(recalls), tuple(valid), tuple(sizes), skipped, tokens)


def evaluate(
    records: Sequence[Mapping[str, Any]],
    compactor: Compactor,
    budget: float = 0.3,
    keep_share: float = 0.5,
    advance: Callable[[], None] = lambda: None,
) -> TauScore:
    """Recall and validity after compacting each trajectory once to ``budget``."""

    def compacted(messages: list[Message]) -> tuple[list[Message], bool, int]:
        out = compact_to_budget(messages, compactor, budget, keep_share)
        return out.messages, out.compacted, out.model_input_tokens

    return _scored(records, compacted, advance)


def references(records: Sequence[Mapping[str, Any]], budget: float) -> dict[str, TauScore]:
    """The whole trajectories, and their last ``budget`` share of messages alone."""

    def whole(messages: list[Message]) -> tuple[list[Message], bool, int]:
        return messages, True, 0  # a reference row: nothing was meant to be compacted

    def last(messages: list[Message]) -> tuple[list[Message], bool, int]:
        return messages[len(messages) - int(len(messages) * budget) :], True, 0

    return {
        "whole trajectory": _scored(records, whole),
        f"last {budget:.0%} of messages": _scored(records, last),
    }
