"""The raw record a summary stands for, for strategies that re-read it.

A rolling summary must not be a summary of summaries: where the messages a
summary covers are still at hand — the service keeps every message; a library
caller may keep the full log — a strategy that can re-read them
(``Summarizer.reads_record``) folds from them instead of from the previous
summary's text, so its hundredth pass is a fresh pass at the same size.

A :data:`RecordReader` returns the messages from one id to another (inclusive) in
order, leaving out those given in ``skip`` (carried verbatim, system).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from recap_memory.chain import Ref
from recap_memory.kinds import as_messages, kind_of
from recap_memory.messages import Message

RecordReader = Callable[[Ref, Ref, Collection[Ref]], Awaitable[Sequence[Message]]]


def record_in(items: Sequence[Any]) -> RecordReader:
    """A reader over a full history the caller keeps, of any kind a caller holds (its
    messages need ids, as a summary names its range by them). Nothing is read until a
    fold asks: a turn with nothing due costs nothing here."""

    async def read(first: Ref, last: Ref, skip: Collection[Ref]) -> Sequence[Message]:
        messages = as_messages(items, kind_of(items))
        position = {m.id: n for n, m in enumerate(messages) if m.id is not None}
        if first not in position or last not in position:
            return ()
        span = messages[position[first] : position[last] + 1]
        return [m for m in span if not m.is_system and m.id not in skip]

    return read
