"""A history that tells the engine how it changed: O(new) per turn at any length.

:class:`Conversation` is a ``list`` (pass it wherever a list of messages goes: the
OpenAI SDK, LangChain, ``json.dumps``) that counts its *edits*: anything other than
adding at the end (``append``, ``extend``, ``+=``). ``Compactor.compact`` given a
Conversation it has read before, with no edit since, trusts the messages it already
read and looks only at the new ones, so a turn when nothing is due costs the same at
100,000 messages as at 10. After any edit (a message replaced, removed, inserted,
the list sorted or cleared) the engine reads it whole again, as it does a plain
list. Messages are values: to change one, replace it (``history[i] = ...``) rather
than mutating it in place, which no list can see.

    history = Conversation()
    history.append({"role": "user", "content": "hi"})
    history = compactor.compact_sync(history).messages   # a Conversation again
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any, SupportsIndex, TypeVar

T = TypeVar("T")

_tokens = itertools.count(1)


class Conversation(list[T]):
    """A list of messages that counts its edits (see the module docstring)."""

    def __init__(self, messages: Iterable[T] = ()) -> None:
        super().__init__(messages)
        self.token = next(_tokens)
        """Which conversation this is (unique in the process; copies get their own)."""
        self.edits = 0
        """How many times it was changed other than by adding at the end."""

    def _edited(self) -> None:
        self.edits += 1

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._edited()

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        super().__delitem__(index)
        self._edited()

    def __imul__(self, count: SupportsIndex) -> Conversation[T]:
        super().__imul__(count)
        self._edited()
        return self

    def insert(self, index: SupportsIndex, value: T) -> None:
        """``list.insert``, counted as an edit."""
        super().insert(index, value)
        self._edited()

    def pop(self, index: SupportsIndex = -1) -> T:
        """``list.pop``, counted as an edit."""
        value = super().pop(index)
        self._edited()
        return value

    def remove(self, value: T) -> None:
        """``list.remove``, counted as an edit."""
        super().remove(value)
        self._edited()

    def clear(self) -> None:
        """``list.clear``, counted as an edit."""
        super().clear()
        self._edited()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        """``list.sort``, counted as an edit."""
        super().sort(*args, **kwargs)
        self._edited()

    def reverse(self) -> None:
        """``list.reverse``, counted as an edit."""
        super().reverse()
        self._edited()

    def copy(self) -> Conversation[T]:
        """A new Conversation with the same messages."""
        return Conversation(self)
