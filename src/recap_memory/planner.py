"""The cut planner: which messages to fold, which to keep, decided without I/O.

Rules it keeps (see DESIGN.md):

- the kept tail starts at a user message (a turn boundary), so a tool call is
  never separated from its result, parallel calls included;
- system messages are never folded: they are carried verbatim to the front;
- pinned messages are never folded: each is carried verbatim, with the whole
  tool-call group it belongs to;
- the newest turn is always kept. When it alone exceeds the keep budget, the
  older tool outputs inside it are masked (oldest first, the last tool group
  untouched, pinned results spared) until it fits, and the plan says so —
  the history stays valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recap_memory.counting import Meter, Size
from recap_memory.masking import mask_tool_result
from recap_memory.messages import Message, tool_groups
from recap_memory.policy import Policy

NOTHING_TO_FOLD = "nothing to fold: the recent turns to keep hold the whole history"


@dataclass(frozen=True)
class Skip:
    """No compaction: ``reason`` says why."""

    reason: str
    size: Size


@dataclass(frozen=True)
class Plan:
    """A compaction decided on ``messages`` (indices into that sequence)."""

    cut: int
    """``messages[cut:]`` are the recent turns, kept verbatim."""
    fold: tuple[int, ...]
    """Messages folded into the summary, in order."""
    system: tuple[int, ...]
    """System messages before the cut: carried to the front unchanged."""
    carried: tuple[int, ...]
    """Pinned messages (with their tool groups) before the cut: carried verbatim."""
    masked: tuple[int, ...]
    """Tool results in the kept turn whose output is masked (oversized newest turn)."""
    size: Size
    """Size of the context before compaction."""
    kept: Size
    """Size of the recent turns kept (``messages[cut:]``), after masking."""
    folded: Size
    """Size of the messages folded (measured once, here, with the rest)."""


def plan_compaction(
    messages: Sequence[Message],
    policy: Policy,
    meter: Meter,
    *,
    fixed: Size | None = None,
) -> Plan | Skip:
    """Decide whether and where to compact ``messages``.

    ``messages`` are the un-summarized history (system messages included);
    ``fixed`` is what the model receives besides them (the current summary,
    the tool schemas), counted toward the trigger.
    """
    sizes = [meter.message(m) for m in messages]
    total = sum(sizes, fixed or Size())
    if not policy.trigger.fires(total):
        return Skip("under the trigger threshold", total)
    new = sum(1 for m in messages if not m.is_system)
    if new < policy.min_new_messages:
        return Skip(f"only {new} new messages, fewer than {policy.min_new_messages}", total)
    units = tool_groups(messages)
    turns = [u.start for u in units if messages[u.start].role == "user"]
    if len(turns) < max(policy.min_user_turns, 1):
        return Skip(f"{len(turns)} user turn(s), fewer than {policy.min_user_turns}", total)

    suffix = _suffix_sizes(sizes)
    cut = turns[-1]
    for start in reversed(turns[:-1]):
        if not policy.keep.allows(suffix[start]):
            break
        cut = start

    pinned_units = [u for u in units if u.stop <= cut and any(messages[i].pinned for i in u)]
    carried = tuple(i for u in pinned_units for i in u)
    system = tuple(i for i in range(cut) if messages[i].is_system)
    verbatim = set(carried) | set(system)
    fold = tuple(i for i in range(cut) if i not in verbatim)
    if not fold:
        return Skip(NOTHING_TO_FOLD, total)

    masked: tuple[int, ...] = ()
    kept = suffix[cut]
    if policy.mask_oversized_turn and not policy.keep.allows(kept):
        masked, kept = _mask_to_fit(messages, units, cut, kept, policy, meter)
    folded = sum((sizes[i] for i in fold), Size())
    return Plan(cut, fold, system, carried, masked, total, kept, folded)


def _suffix_sizes(sizes: Sequence[Size]) -> list[Size]:
    out = [Size()] * (len(sizes) + 1)
    for i in range(len(sizes) - 1, -1, -1):
        out[i] = out[i + 1] + sizes[i]
    return out


def _mask_to_fit(
    messages: Sequence[Message],
    units: Sequence[range],
    cut: int,
    tail: Size,
    policy: Policy,
    meter: Meter,
) -> tuple[tuple[int, ...], Size]:
    """Tool results of the kept turn to mask, oldest first, sparing the last tool group;
    and the kept turn's size once they are masked."""
    groups = [u for u in units if u.start >= cut and len(u) > 1]
    masked: list[int] = []
    for unit in groups[:-1]:
        for i in unit[1:]:
            if messages[i].pinned:
                continue
            saving = meter.message(messages[i]) - meter.message(mask_tool_result(messages[i]))
            if saving.chars <= 0:
                continue
            masked.append(i)
            tail = tail - saving
            if policy.keep.allows(tail):
                return tuple(masked), tail
    return tuple(masked), tail
