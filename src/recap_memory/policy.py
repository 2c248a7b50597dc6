"""When to compact and how much to keep: triggers, keep budgets, skip rules.

A :class:`Policy` is plain data (a frozen pydantic model, unknown options
rejected). The trigger and the keep budget are separate settings, each in
characters, tokens or messages; the trigger may combine several units with
``any`` or ``all``. Invalid combinations (negative sizes, a keep budget not
below the trigger in the same unit) are refused when the policy is built.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from recap_memory.counting import Size

Unit = Literal["chars", "tokens", "messages"]
UNITS: tuple[Unit, ...] = ("chars", "tokens", "messages")

CHARS_PER_TOKEN = 4
DEFAULT_TRIGGER_CHARS = 60_000
"""Design A's ``SUMMARIZATION_THRESHOLD_CHARS``: compact past this many characters."""
DEFAULT_KEEP_CHARS = 20_000
"""Design A's ``SUMMARIZATION_KEEP_CHARS``: the recent turns kept verbatim."""
DEFAULT_SUMMARY_MAX_CHARS = 4_000
"""The summary's cap where the room between trigger and keep cannot be known (a trigger
and a keep budget in different units, or a keep budget in messages)."""
DEFAULT_UPDATE_BELOW_TOKENS = 800
"""Design B's ``SUMMARY_MAX_TOKENS``: the latest summary row is updated while under this size."""
SUMMARY_SHARE_OF_ROOM = 2 / 3
"""The summary's default share of the room between the trigger and the keep budget."""
MIN_SUMMARY_CHARS = 200
"""However tight the budgets, a summary may take this many characters."""

_Frozen = ConfigDict(frozen=True, extra="forbid")


class Trigger(BaseModel):
    """Compaction is due when the context reaches these sizes (``any`` or ``all`` of them)."""

    model_config = _Frozen

    chars: int | None = Field(default=None, gt=0)
    tokens: int | None = Field(default=None, gt=0)
    messages: int | None = Field(default=None, gt=0)
    mode: Literal["any", "all"] = "any"

    @model_validator(mode="after")
    def _one_unit_at_least(self) -> Self:
        if not self.limits():
            raise ValueError("a trigger needs at least one of chars, tokens or messages")
        return self

    def limits(self) -> dict[Unit, int]:
        """The units this trigger watches, with their thresholds."""
        return {u: v for u in UNITS if (v := getattr(self, u)) is not None}

    def fires(self, size: Size) -> bool:
        """Whether a context of ``size`` is over the threshold."""
        hits = [size.get(u) > limit for u, limit in self.limits().items()]
        return any(hits) if self.mode == "any" else all(hits)


class Budget(BaseModel):
    """A size limit in exactly one unit (the recent turns to keep, a summary's cap)."""

    model_config = _Frozen

    chars: int | None = Field(default=None, ge=0)
    tokens: int | None = Field(default=None, ge=0)
    messages: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _exactly_one_unit(self) -> Self:
        if len(self._set()) != 1:
            raise ValueError("a budget takes exactly one of chars, tokens or messages")
        return self

    def _set(self) -> dict[Unit, int]:
        return {u: v for u in UNITS if (v := getattr(self, u)) is not None}

    @property
    def unit(self) -> Unit:
        """The budget's unit."""
        return next(iter(self._set()))

    @property
    def value(self) -> int:
        """The budget's size in its unit."""
        return next(iter(self._set().values()))

    def allows(self, size: Size) -> bool:
        """Whether ``size`` fits the budget."""
        return size.get(self.unit) <= self.value


class Policy(BaseModel):
    """Everything the engine needs to decide whether and where to compact.

    Defaults follow the reference designs: trigger at 60,000 characters, keep
    20,000 (Design A); skip with fewer than 2 user turns; update the latest
    summary while it is under 800 tokens, else start a new one (Design B).
    """

    model_config = _Frozen

    enabled: bool = True
    trigger: Trigger = Trigger(chars=DEFAULT_TRIGGER_CHARS)
    keep: Budget = Budget(chars=DEFAULT_KEEP_CHARS)
    summary_max: Budget = Budget(chars=DEFAULT_SUMMARY_MAX_CHARS)
    """Hard cap on the summary's size (see :meth:`summary_chars`); a longer one is rejected."""
    update_below: Budget = Budget(tokens=DEFAULT_UPDATE_BELOW_TOKENS)
    """The latest summary is updated cumulatively while it is under this size."""
    min_user_turns: int = Field(default=2, ge=0)
    """Skip when the history has fewer user turns than this (Design A)."""
    min_new_messages: int = Field(default=0, ge=0)
    """Skip when fewer messages arrived since the last summary (Design B)."""
    max: Budget | None = None
    """Hard cap (chars or tokens) on the context returned: never exceeded. After folding,
    the largest tool outputs are cut to head and tail, then masked; a context that still
    does not fit is an error."""
    mask_oversized_turn: bool = True
    """When the newest turn alone exceeds the keep budget, mask its older tool outputs."""

    def summary_chars(self) -> int:
        """The most characters the summary (the whole chain) may take.

        ``summary_max`` when it was set. Left unset, :data:`SUMMARY_SHARE_OF_ROOM` of the
        room between the trigger and the keep budget (when they count the same unit,
        chars or tokens): the summary keeps as much as the budget affords while the next
        pass stays a third of the room away. A summarizer that writes less (a model's
        answer is bounded by its max tokens) leaves more room, and passes come less
        often. Where the room cannot be known, ``summary_max``'s default.
        """
        unit = 1 if self.summary_max.unit == "chars" else CHARS_PER_TOKEN
        cap = self.summary_max.value * unit
        limit = self.trigger.limits().get(self.keep.unit)
        if "summary_max" in self.model_fields_set or limit is None or self.keep.unit == "messages":
            return cap
        room = (limit - self.keep.value) * SUMMARY_SHARE_OF_ROOM
        return max(
            MIN_SUMMARY_CHARS, int(room) * (1 if self.keep.unit == "chars" else CHARS_PER_TOKEN)
        )

    def hold_limits(self, *, after_a_pass: bool) -> list[Budget]:
        """The sizes a returned view is held within: the hard cap, and once a pass was
        tried, the trigger's char or token threshold (never left over it by a huge tool
        output)."""
        limits = [self.max] if self.max is not None else []
        if after_a_pass:
            limits += [
                Budget(**{u: v}) for u, v in self.trigger.limits().items() if u != "messages"
            ]
        return limits

    def is_due(self, context: Size, new_messages: int) -> bool:
        """The per-turn gate: the context is over the trigger and enough new messages came.

        O(1): it reads sizes kept as counters, never the messages themselves.
        """
        return (
            self.enabled
            and new_messages >= max(1, self.min_new_messages)
            and self.trigger.fires(context)
        )

    def forced(self) -> Policy:
        """This policy with a trigger that always fires (a compaction asked for by hand)."""
        return self.model_copy(
            update={
                "trigger": Trigger(messages=1),
                "min_new_messages": 0,
                "summary_max": Budget(chars=self.summary_chars()),  # the same room as usual
            }
        )

    @model_validator(mode="after")
    def _keep_below_trigger(self) -> Self:
        limit = self.trigger.limits().get(self.keep.unit)
        if limit is not None and self.keep.value >= limit:
            raise ValueError(
                f"keep budget ({self.keep.value} {self.keep.unit}) must be below the trigger "
                f"({limit} {self.keep.unit}), or compaction would never make room"
            )
        if self.summary_max.unit == "messages":
            raise ValueError("summary_max is a size in chars or tokens, not messages")
        if self.max is not None and self.max.unit == "messages":
            raise ValueError("max is a size in chars or tokens, not messages")
        return self
