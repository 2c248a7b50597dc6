"""The message model and its OpenAI chat adapter.

A :class:`Message` is one chat message: a role, text or content parts, the
assistant's tool calls (several = parallel calls), a tool result's
``tool_call_id``, and recap's own fields (``id``, ``pinned``). Messages are
immutable; the engine never edits one in place.

``from_openai`` / ``to_openai`` convert to and from OpenAI chat dicts without
loss: unknown keys ride along in ``extra`` and come back unchanged. The one
normalisation is that ``content`` is always written (``null`` when absent), as
the OpenAI API itself does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from recap_memory.errors import InputError, InvalidHistoryError

Role = Literal["system", "developer", "user", "assistant", "tool"]
"""``developer`` (OpenAI's name for instructions to reasoning models) is kept as written
and treated like ``system``: never folded, always in front."""
INSTRUCTION_ROLES = frozenset({"system", "developer"})
ROLES: tuple[str, ...] = get_args(Role)
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
Content = str | list[dict[str, Any]] | None


class ToolCall(BaseModel):
    """One function call requested by an assistant message."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"
    """The arguments as the JSON text the model produced (kept verbatim)."""
    type: str | None = "function"
    extra: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    """One chat message (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: Content = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    id: str | int | None = None
    reasoning: str | None = None
    reasoning_key: str = "reasoning_content"
    pinned: bool = False
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_system(self) -> bool:
        """Whether the message instructs the model (``system`` or ``developer``)."""
        return self.role in INSTRUCTION_ROLES

    @property
    def text(self) -> str:
        """The message's visible text: the string content, or its text parts joined."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        parts = [_part_text(p) for p in self.content]
        return "\n".join(p for p in parts if p)

    @property
    def countable_text(self) -> str:
        """Everything a model reads from this message: text, reasoning, tool calls."""
        pieces = [self.text]
        if self.reasoning:
            pieces.append(self.reasoning)
        pieces.extend(f"{c.name}({c.arguments})" for c in self.tool_calls)
        return "\n".join(p for p in pieces if p)

    def replace(self, **changes: Any) -> Message:
        """A copy with some fields changed."""
        return self.model_copy(update=changes)


def _part_text(part: Mapping[str, Any]) -> str:
    kind = part.get("type")
    if kind in ("text", "input_text", "output_text"):
        return str(part.get("text", ""))
    if kind in ("thinking", "reasoning"):
        return str(part.get("thinking") or part.get("text") or "")
    return ""


_KNOWN_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name", "id", "pinned"}


def from_openai(data: Any, *, where: str | None = None) -> Message:
    """Build a :class:`Message` from one OpenAI chat message dict.

    Raises :class:`InputError` naming ``where`` when the dict is malformed.
    """
    if not isinstance(data, Mapping):
        raise InputError(f"a message must be a JSON object, got {type(data).__name__}", where=where)
    role = data.get("role")
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}", where=where)
    content = data.get("content")
    if content is not None and not isinstance(content, str | list):
        raise InputError("'content' must be a string, a list of parts or null", where=where)
    if isinstance(content, list) and not all(isinstance(p, Mapping) for p in content):
        raise InputError("every content part must be a JSON object", where=where)
    reasoning_key = next((k for k in REASONING_KEYS if k in data), "reasoning_content")
    reasoning = data.get(reasoning_key)
    if reasoning is not None and not isinstance(reasoning, str):
        raise InputError(f"'{reasoning_key}' must be a string", where=where)
    pinned = data.get("pinned", False)
    if not isinstance(pinned, bool):
        raise InputError("'pinned' must be true or false", where=where)
    for key in ("tool_call_id", "name"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise InputError(f"'{key}' must be a string", where=where)
    if data.get("id") is not None and not isinstance(data["id"], str | int):
        raise InputError("'id' must be a string or an integer", where=where)
    raw_calls = data.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise InputError("'tool_calls' must be a list", where=where)
    if raw_calls and role != "assistant":
        raise InputError(f"only assistant messages may have tool_calls, not {role}", where=where)
    if role == "tool" and not data.get("tool_call_id"):
        raise InputError(
            "a tool message needs the 'tool_call_id' of the call it answers", where=where
        )
    extra = {k: v for k, v in data.items() if k not in _KNOWN_KEYS and k != reasoning_key}
    if "tool_calls" in data and not raw_calls:
        extra["tool_calls"] = data["tool_calls"]  # keep an explicit empty list / null as given
    return Message(
        role=role,
        content=content,
        tool_calls=tuple(_tool_call(c, where) for c in raw_calls),
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
        id=data.get("id"),
        reasoning=reasoning,
        reasoning_key=reasoning_key,
        pinned=pinned,
        extra=extra,
    )


def _tool_call(data: Any, where: str | None) -> ToolCall:
    if not isinstance(data, Mapping):
        raise InputError("every tool call must be a JSON object", where=where)
    function = data.get("function")
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise InputError(
            "a tool call needs 'function': {'name': ..., 'arguments': ...}", where=where
        )
    if not isinstance(data.get("id"), str) or not data["id"]:
        raise InputError("a tool call needs a non-empty string 'id'", where=where)
    arguments = function.get("arguments", "{}")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    extra = {k: v for k, v in data.items() if k not in ("id", "type", "function")}
    fn_extra = {k: v for k, v in function.items() if k not in ("name", "arguments")}
    if fn_extra:
        extra["function"] = fn_extra
    return ToolCall(
        id=data["id"],
        name=function["name"],
        arguments=arguments,
        type=data.get("type"),
        extra=extra,
    )


def to_openai(message: Message, *, recap_fields: bool = True) -> dict[str, Any]:
    """Write a :class:`Message` back as an OpenAI chat dict.

    With ``recap_fields=False`` the recap-only keys (``id``, ``pinned``) are left
    out, for sending to a provider that rejects unknown keys.
    """
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [_tool_call_dict(c) for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    if message.reasoning is not None:
        out[message.reasoning_key] = message.reasoning
    out.update(message.extra)
    if recap_fields:
        if message.id is not None:
            out["id"] = message.id
        if message.pinned:
            out["pinned"] = True
    return out


def _tool_call_dict(call: ToolCall) -> dict[str, Any]:
    extra = dict(call.extra)
    function = {"name": call.name, "arguments": call.arguments, **extra.pop("function", {})}
    out: dict[str, Any] = {"id": call.id, "function": function, **extra}
    if call.type is not None:
        out["type"] = call.type
    return out


def parse_messages(items: Iterable[Any], *, source: str = "input") -> list[Message]:
    """Parse OpenAI dicts into messages and check they form a valid history."""
    messages = [from_openai(d, where=f"{source}: message {i}") for i, d in enumerate(items)]
    validate_history(messages, source=source)
    return messages


def tool_groups(messages: Sequence[Message]) -> list[range]:
    """Split messages into atomic units: a tool-call group or a single message.

    A tool-call group is an assistant message with tool calls followed by the
    tool results that answer it (parallel calls give several results). Cutting
    inside a group would leave a call without its result, which providers reject.
    """
    units: list[range] = []
    i = 0
    while i < len(messages):
        j = i + 1
        if messages[i].role == "assistant" and messages[i].tool_calls:
            while j < len(messages) and messages[j].role == "tool":
                j += 1
        units.append(range(i, j))
        i = j
    return units


def validate_history(
    messages: Sequence[Message],
    *,
    source: str = "input",
    allow_pending: bool = True,
    offset: int = 0,
) -> None:
    """Raise :class:`InvalidHistoryError` unless every tool result follows its call.

    Every tool message must answer a call of the assistant message that opens
    its group, and every call must get its result — except in the last group
    when ``allow_pending`` (a call still running). ``offset``: the position of
    ``messages[0]`` in the whole history, for the message numbers errors report.
    """
    units = tool_groups(messages)
    for n, unit in enumerate(units):
        head = messages[unit.start]
        if head.role == "tool":
            raise InvalidHistoryError(
                f"tool result for call {head.tool_call_id!r} has no assistant tool call before it",
                where=f"{source}: message {unit.start + offset}",
            )
        if not head.tool_calls:
            continue
        wanted = [c.id for c in head.tool_calls]
        answered: list[str] = []
        for i in unit[1:]:
            call_id = messages[i].tool_call_id
            if call_id not in wanted or call_id in answered:
                problem = "answers no call of" if call_id not in wanted else "repeats a call of"
                raise InvalidHistoryError(
                    f"tool result for call {call_id!r} {problem} the assistant message "
                    f"{unit.start + offset}",
                    where=f"{source}: message {i + offset}",
                )
            answered.append(call_id)
        missing = [c for c in wanted if c not in answered]
        if missing and not (allow_pending and n == len(units) - 1):
            raise InvalidHistoryError(
                f"tool call(s) {', '.join(map(repr, missing))} have no result",
                where=f"{source}: message {unit.start + offset}",
            )


def is_valid_history(messages: Sequence[Message]) -> bool:
    """True when :func:`validate_history` accepts the messages."""
    try:
        validate_history(messages)
    except InvalidHistoryError:
        return False
    return True
