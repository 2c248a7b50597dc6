"""Holding a view within a size: the largest tool outputs cut, then masked.

Used where a context must fit whatever the summary could do: the hard cap
(``Policy.max``), and after a pass whose kept turns alone stay over the trigger
(a huge tool output in the newest turn). Outputs are cut largest first to their
head and tail (marked with the call id and full size), and masked to a stub only
when cutting is not enough; every call keeps its result, so the history stays
valid. Pinned outputs are never touched. Pure: it returns a new list and never
touches the record.
"""

from __future__ import annotations

from collections.abc import Sequence

from recap_memory.counting import Meter
from recap_memory.masking import MIN_CUT_CHARS, cut_tool_result, is_masked, mask_tool_result
from recap_memory.messages import Message
from recap_memory.policy import CHARS_PER_TOKEN, Budget


def fit(messages: Sequence[Message], limit: Budget, meter: Meter) -> tuple[list[Message], int]:
    """``messages`` with tool outputs cut (then masked) until they fit ``limit`` (chars or
    tokens); how many outputs were changed. It may still not fit: no other message is
    touched."""
    view = list(messages)
    changed: set[int] = set()
    for shrink in (_cut, _mask):
        while (excess := _excess(view, limit, meter)) > 0:
            index = _largest(view, changed if shrink is _cut else set())
            if index is None:
                break
            smaller = shrink(view[index], excess)
            if smaller.text == view[index].text:
                changed.add(index)  # nothing more to gain from this one
                continue
            view[index] = smaller
            changed.add(index)
    return view, sum(1 for i, m in enumerate(view) if m is not messages[i])


def _excess(view: Sequence[Message], limit: Budget, meter: Meter) -> int:
    """Characters over ``limit`` (tokens counted as characters)."""
    size = meter.messages(view).get(limit.unit)
    over = size - limit.value
    return over * (CHARS_PER_TOKEN if limit.unit == "tokens" else 1)


def _largest(view: Sequence[Message], skip: set[int]) -> int | None:
    tools = [
        (len(m.text), i)
        for i, m in enumerate(view)
        if m.role == "tool" and not m.pinned and not is_masked(m) and i not in skip
    ]
    return max(tools)[1] if tools else None


def _cut(message: Message, excess: int) -> Message:
    return cut_tool_result(message, max(MIN_CUT_CHARS, len(message.text) - excess))


def _mask(message: Message, excess: int) -> Message:
    return mask_tool_result(message)


def too_large(view: Sequence[Message], limit: Budget, meter: Meter) -> str:
    """Why ``view`` cannot fit ``limit`` once every tool output is masked."""
    size = meter.messages(view).get(limit.unit)
    user = next((m for m in reversed(view) if m.role == "user"), None)
    newest = meter.message(user).get(limit.unit) if user is not None else 0
    what = (
        f"the newest user message alone is {newest:,} {limit.unit}"
        if newest > limit.value
        else "the system prompt, the summary and the messages that cannot be cut"
    )
    return (
        f"the context is {size:,} {limit.unit} with every tool output masked, over the hard "
        f"cap of {limit.value:,} {limit.unit}: {what}; raise the cap or shorten it"
    )
