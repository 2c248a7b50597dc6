"""What the engine already knows of a growing history: O(new) per turn.

An app calls ``compact`` once per turn on a history that only grows. A
:class:`PrefixCache` remembers, for the last histories it saw, the messages as
given, their conversion, the summary chain at their front, their size and where
their last tool group starts. A call whose history starts with a remembered one only
converts, validates and measures the messages added since; the engine then decides
"not due" from the sizes alone. Anything else — a history edited in the middle,
another conversation — is measured whole, as before, and remembered for the next call.

Whether a history starts with a remembered one is checked two ways:

- a plain list is compared element by element with Python's list equality, which
  takes an identical object as equal at C speed and compares the others by content,
  so a message replaced anywhere is seen (O(n), but a few nanoseconds a message);
- a :class:`~recap_memory.conversation.Conversation` read before and not edited since
  (it counts its edits) is trusted without a look at the old messages: O(new).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recap_memory.chain import Chain, split_view
from recap_memory.conversation import Conversation
from recap_memory.counting import Meter, Size
from recap_memory.kinds import Kind, as_messages, kind_of
from recap_memory.messages import Message, validate_history

SLOTS = 64
"""Histories remembered at once (one per conversation an app interleaves)."""


@dataclass
class Prefix:
    """A history as the engine reads it (see the module docstring). Its lists only ever
    grow (under the cache's lock); :class:`Known` is what one call may rely on."""

    items: list[Any]
    """The caller's messages, as given."""
    kind: Kind
    messages: list[Message]
    chain: Chain
    size: Size
    """What the messages besides the summary at the front measure."""
    summary: Size
    """What the summary at the front measures (measured once: it is read every turn)."""
    last_head: int
    """Index of the last message that is not a tool result (its group may be open)."""
    source: tuple[int, int] | None = None
    """The Conversation these messages are, and its edit count, when read from one."""

    @classmethod
    def read(cls, items: Sequence[Any], meter: Meter, chain: Chain | None = None) -> Prefix:
        """A history read whole: converted, validated, split and measured (O(n)).
        ``chain``: the summary chain at its front when the caller knows it exactly (the
        result of a pass, with message ids); else it is read back from the text."""
        kind = kind_of(items)
        messages = as_messages(items, kind)
        validate_history(messages)
        body, parsed, _ = split_view(messages)
        summary = parsed.message()
        return cls(
            list(items), kind, messages, chain if chain is not None else parsed,
            meter.messages(body), meter.message(summary) if summary is not None else Size(),
            _last_head(messages), _source(items),
        )  # fmt: skip

    def trusts(self, items: Sequence[Any]) -> bool:
        """Whether ``items`` is the Conversation these messages were read from, unedited
        since (then its first messages are these, without a look)."""
        return self.source is not None and _source(items) == self.source

    def extend(self, new: Sequence[Any], meter: Meter) -> bool:
        """Append ``new``: only they are converted, measured, and validated from the last
        tool group on (O(new)). False when they must be read with the whole (a summary
        may open a history that held only system messages)."""
        added = as_messages(new, self.kind)
        if not self.chain.rows and all(m.is_system for m in self.messages):
            return False
        start = len(self.messages)
        validate_history([*self.messages[self.last_head :], *added], offset=self.last_head)
        self.items.extend(new)
        self.messages.extend(added)
        self.size = self.size + meter.messages(added)
        self.last_head = _last_head(self.messages, start, self.last_head)
        return True


def _source(items: Sequence[Any]) -> tuple[int, int] | None:
    """Which Conversation ``items`` is, and its edit count (None for any other sequence)."""
    return (items.token, items.edits) if isinstance(items, Conversation) else None


@dataclass(frozen=True)
class Known:
    """What one call knows of its history: its kind, chain and size, and the messages
    (copied only when a pass needs them)."""

    prefix: Prefix
    count: int
    kind: Kind
    chain: Chain
    size: Size
    summary: Size

    def messages(self) -> list[Message]:
        """The history's messages (a copy: the prefix may grow meanwhile)."""
        return self.prefix.messages[: self.count]


def _last_head(messages: Sequence[Message], since: int = 0, before: int = 0) -> int:
    """Index of the last non-tool message at or after ``since`` (else ``before``)."""
    for i in range(len(messages) - 1, since - 1, -1):
        if messages[i].role != "tool":
            return i
    return before


class PrefixCache:
    """The last :data:`SLOTS` histories read, found again by their first messages."""

    def __init__(self, slots: int = SLOTS) -> None:
        self.slots = slots
        self._entries: OrderedDict[tuple[int, int], Prefix] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, items: Sequence[Any], meter: Meter) -> Known:
        """``items`` read, reusing what is known of a history they extend."""
        key = _key(items)
        with self._lock:
            known = self._entries.get(key)
            if known is not None and self._extends(known, items, meter):
                self._entries.move_to_end(key)
                return Known(known, len(items), known.kind, known.chain, known.size, known.summary)
        prefix = Prefix.read(items, meter)
        self.remember(prefix)
        return Known(prefix, len(items), prefix.kind, prefix.chain, prefix.size, prefix.summary)

    @staticmethod
    def _extends(known: Prefix, items: Sequence[Any], meter: Meter) -> bool:
        """Whether ``items`` start with ``known``'s messages (then ``known`` grows by the
        rest): trusted for the unedited Conversation ``known`` was read from, else
        compared whole (the new messages are added to ``known`` for the comparison,
        which copies nothing, and taken off again when it fails)."""
        count = len(known.items)
        if len(items) < count:
            return False
        new = list(items[count:])
        if not known.trusts(items):
            known.items.extend(new)
            same = known.items == (items if isinstance(items, list) else list(items))
            del known.items[count:]
            if not same:
                return False
            known.source = _source(items)
        return not new or known.extend(new, meter)

    def remember(self, prefix: Prefix) -> None:
        """Keep ``prefix`` for the next call (the oldest slot goes when full)."""
        if not prefix.items:
            return
        with self._lock:
            self._entries[_key(prefix.items)] = prefix
            self._entries.move_to_end(_key(prefix.items))
            while len(self._entries) > self.slots:
                self._entries.popitem(last=False)


def _key(items: Sequence[Any]) -> tuple[int, int]:
    """Which slot a history belongs to: the identity of its first two messages."""
    return (id(items[0]) if items else 0, id(items[1]) if len(items) > 1 else 0)
