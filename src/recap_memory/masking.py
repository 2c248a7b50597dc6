"""Observation masking: a tool output replaced by a stub that says what was elided.

The stub keeps the tool message (so the call still has its result and the
history stays valid) and names the tool, the call id and how much was removed.
The original stays in the record; only the model's view changes.
"""

from __future__ import annotations

from recap_memory.messages import Message

STUB = "[recap: output of {tool} (call {call}) elided, {chars:,} chars; ask again if needed]"
CUT = "[recap: output of {tool} (call {call}) cut to its head and tail, {chars:,} chars in all]"
GAP = "[… {chars:,} chars cut …]"
_STUB_PREFIX = "[recap: output of "
_STUB_END = "; ask again if needed]"
MIN_CUT_CHARS = 200
"""A cut output keeps at least this many characters of its head and tail together."""


def is_masked(message: Message) -> bool:
    """Whether the message is already a masking stub."""
    text = message.text
    return message.role == "tool" and text.startswith(_STUB_PREFIX) and text.endswith(_STUB_END)


def is_shortened(message: Message) -> bool:
    """Whether recap masked or cut the message's output (the record holds it whole)."""
    return message.role == "tool" and message.text.startswith(_STUB_PREFIX)


def cut_tool_result(message: Message, chars: int) -> Message:
    """The tool message with its content cut to about ``chars`` characters: a marker line
    (tool, call id, full size), the head, a gap marker, the tail. A content already that
    short, a masked or a non-tool message is returned unchanged."""
    text = message.text
    if message.role != "tool" or is_shortened(message) or len(text) <= chars:
        return message
    marker = CUT.format(tool=message.name or "tool", call=message.tool_call_id, chars=len(text))
    room = max(MIN_CUT_CHARS, chars - len(marker) - 40)
    head, tail = text[: room - room // 3], text[len(text) - room // 3 :]
    gap = GAP.format(chars=len(text) - len(head) - len(tail))
    return message.replace(content=f"{marker}\n{head}\n{gap}\n{tail}")


def mask_tool_result(message: Message) -> Message:
    """The tool message with its content replaced by a stub (other messages unchanged)."""
    if message.role != "tool" or is_masked(message):
        return message
    stub = STUB.format(
        tool=message.name or "tool", call=message.tool_call_id, chars=len(message.text)
    )
    return message.replace(content=stub)
