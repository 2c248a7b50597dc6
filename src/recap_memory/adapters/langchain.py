"""LangChain ``BaseMessage`` <-> recap :class:`~recap_memory.messages.Message`, without loss.

Needs ``langchain-core`` (``pip install recap-memory[langchain]``). Tool calls keep
their ids and arguments; ``additional_kwargs``, ``response_metadata`` and the
other fields LangChain carries ride along and come back unchanged; reasoning
kept in ``additional_kwargs["reasoning_content"]`` is counted like any text.
A message's ``id`` is kept, so it can be removed later with ``RemoveMessage``.
"""

from __future__ import annotations

import json
from typing import Any

from recap_memory.errors import InputError
from recap_memory.messages import Message, ToolCall

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "recap_memory.adapters.langchain needs langchain-core: "
        "pip install 'recap-memory[langchain]'"
    ) from exc

_ROLE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_LC_KEY = "langchain"


def from_langchain(message: BaseMessage) -> Message:
    """A recap message from a LangChain message (human, ai, system or tool)."""
    role = _ROLE.get(message.type)
    if role is None:
        raise InputError(f"unsupported LangChain message type {message.type!r}")
    kwargs = dict(message.additional_kwargs)
    pinned = bool(kwargs.pop("pinned", False))
    reasoning = kwargs.pop("reasoning_content", None)
    calls: tuple[ToolCall, ...] = ()
    if isinstance(message, AIMessage):
        calls = tuple(
            ToolCall(id=c["id"] or "", name=c["name"], arguments=json.dumps(c["args"]))
            for c in message.tool_calls
        )
    keep: dict[str, Any] = {
        "additional_kwargs": kwargs,
        "response_metadata": dict(message.response_metadata),
    }
    if isinstance(message, AIMessage):
        keep["invalid_tool_calls"] = list(message.invalid_tool_calls)
        keep["usage_metadata"] = message.usage_metadata
    if isinstance(message, ToolMessage):
        keep["status"] = message.status
        keep["artifact"] = message.artifact
    return Message(
        role=role,
        content=message.content,
        tool_calls=calls,
        tool_call_id=message.tool_call_id if isinstance(message, ToolMessage) else None,
        name=message.name,
        id=message.id,
        reasoning=reasoning,
        pinned=pinned,
        extra={_LC_KEY: keep},
    )


def to_langchain(message: Message) -> BaseMessage:
    """The LangChain message for a recap message (the inverse of :func:`from_langchain`)."""
    keep: dict[str, Any] = dict(message.extra.get(_LC_KEY, {}))
    kwargs = dict(keep.pop("additional_kwargs", {}))
    if message.pinned:
        kwargs["pinned"] = True
    if message.reasoning is not None:
        kwargs["reasoning_content"] = message.reasoning
    common: dict[str, Any] = {
        "content": message.content if message.content is not None else "",
        "additional_kwargs": kwargs,
        "response_metadata": keep.pop("response_metadata", {}),
        "name": message.name,
        "id": None if message.id is None else str(message.id),
    }
    if message.role == "user":
        return HumanMessage(**common)
    if message.is_system:
        return SystemMessage(**common)  # LangChain has no developer message of its own
    if message.role == "tool":
        return ToolMessage(
            tool_call_id=message.tool_call_id or "",
            status=keep.get("status", "success"),
            artifact=keep.get("artifact"),
            **common,
        )
    return AIMessage(
        tool_calls=[
            {"id": c.id, "name": c.name, "args": _args(c.arguments), "type": "tool_call"}
            for c in message.tool_calls
        ],
        invalid_tool_calls=keep.get("invalid_tool_calls", []),
        usage_metadata=keep.get("usage_metadata"),
        **common,
    )


def _args(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"__raw__": arguments}
    return value if isinstance(value, dict) else {"__value__": value}
