"""Hypothesis strategies: conversations with parallel tool calls, pins and system messages."""

from __future__ import annotations

from hypothesis import strategies as st

from recap_memory.messages import Message, ToolCall

WORDS = (
    "payments checkout timeout 503 deploy v4.18.2 Alice Bob Seattle 2024-05-20 flight HAT069 "
    "reservation ZFA04Y refund cancelled ok yes no because database latency p99 3100ms error "
    "logs config rollback ticket CHG-58213 tuesday march cat painting"
).split()

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """A valid history: optional system prompt, 1-8 user turns with tool groups."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(Message(role="system", content=draw(texts)))
    call_no = 0
    for _ in range(draw(st.integers(1, 8))):
        messages.append(
            Message(role="user", content=draw(texts), pinned=draw(st.integers(0, 9)) == 0)
        )
        for _ in range(draw(st.integers(0, 3))):
            width = draw(st.integers(1, 3))
            ids = [f"call_{call_no + k}" for k in range(width)]
            call_no += width if draw(st.booleans()) else 0  # ids reused across groups sometimes
            messages.append(
                Message(
                    role="assistant",
                    content=draw(st.none() | texts),
                    tool_calls=tuple(ToolCall(id=i, name="lookup") for i in ids),
                )
            )
            order = draw(st.permutations(ids))
            for call_id in order:
                messages.append(
                    Message(
                        role="tool",
                        content=draw(texts),
                        tool_call_id=call_id,
                        name="lookup",
                        pinned=draw(st.integers(0, 14)) == 0,
                    )
                )
        messages.append(Message(role="assistant", content=draw(texts)))
        if draw(st.integers(0, 9)) == 0:
            messages.append(Message(role="system", content=draw(texts)))
    return messages
