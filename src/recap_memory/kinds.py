"""What callers hold: recap messages, OpenAI chat dicts or LangChain messages.

:func:`as_messages` reads any of them (all of one kind) into :class:`Message`;
:func:`as_kind` writes messages back as that kind, so ``compact`` gives back what it
was given. OpenAI dicts come back clean (no recap-only keys: a provider accepts
them as they are); LangChain needs ``langchain-core``, imported only when used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from recap_memory.errors import InputError
from recap_memory.messages import Message, from_openai, to_openai

Kind = Literal["recap", "openai", "langchain"]


def kind_of(messages: Sequence[Any]) -> Kind:
    """The kind of ``messages`` (by the first; an empty list is ``recap``)."""
    first = messages[0] if messages else None
    if first is None or isinstance(first, Message):
        return "recap"
    if isinstance(first, Mapping):
        return "openai"
    if type(first).__module__.startswith("langchain"):
        return "langchain"
    raise InputError(
        f"messages must be recap Messages, OpenAI chat dicts or LangChain messages, got "
        f"{type(first).__name__}"
    )


def as_messages(messages: Sequence[Any], kind: Kind) -> list[Message]:
    """``messages`` (all of ``kind``) as recap messages; a mixed list is an InputError."""
    if kind == "recap":
        _same(messages, Message, kind)
        return list(messages)
    if kind == "openai":
        _same(messages, Mapping, kind)
        return [from_openai(m, where=f"message {n}") for n, m in enumerate(messages)]
    from recap_memory.adapters.langchain import from_langchain

    return [from_langchain(m) for m in messages]


def as_kind(messages: Sequence[Message], kind: Kind) -> list[Any]:
    """``messages`` written as ``kind``."""
    if kind == "recap":
        return list(messages)
    if kind == "openai":
        return [to_openai(m, recap_fields=False) for m in messages]
    from recap_memory.adapters.langchain import to_langchain

    return [to_langchain(m) for m in messages]


def _same(messages: Sequence[Any], cls: type, kind: Kind) -> None:
    for n, message in enumerate(messages):
        if not isinstance(message, cls):
            raise InputError(
                f"message {n} is a {type(message).__name__} among {kind} messages: give one kind"
            )
