"""Observation masking: a tool output replaced by a stub that says what was elided.

The stub keeps the tool message (so the call still has its result and the
history stays valid) and names the tool, the call id and how much was removed.
The original stays in the record; only the model's view changes.
"""

from __future__ import annotations

from recap_memory.messages import Message

STUB = "[recap: output of {tool} (call {call}) elided, {chars:,} chars; ask again if needed]"
_STUB_PREFIX = "[recap: output of "


def is_masked(message: Message) -> bool:
    """Whether the message is already a masking stub."""
    return message.role == "tool" and message.text.startswith(_STUB_PREFIX)


def mask_tool_result(message: Message) -> Message:
    """The tool message with its content replaced by a stub (other messages unchanged)."""
    if message.role != "tool" or is_masked(message):
        return message
    stub = STUB.format(
        tool=message.name or "tool", call=message.tool_call_id, chars=len(message.text)
    )
    return message.replace(content=stub)
