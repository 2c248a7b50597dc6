"""Request and response bodies of the HTTP API."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recap_memory.inputs import check_json
from recap_memory.store.models import SessionRecord


def storable(value: Any) -> Any:
    """``value`` when the store can keep it and write it back (see
    :func:`recap_memory.inputs.check_json`; NUL characters refused too); a ValueError otherwise."""
    return check_json(value, allow_nul=False)


class NewSession(BaseModel):
    """Body of ``POST /sessions`` (all optional)."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, max_length=500)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("title", "metadata")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        return storable(value)


class SessionOut(BaseModel):
    """A session: its external id, sizes and compaction state."""

    id: str
    title: str | None
    metadata: dict[str, Any]
    created_at: dt.datetime
    updated_at: dt.datetime
    message_count: int
    char_count: int
    token_count: int
    context_chars: int
    context_tokens: int
    summarized_through: int | None
    due: bool
    compacting: bool
    failures: int
    last_error: str | None

    @classmethod
    def of(cls, record: SessionRecord, now: dt.datetime) -> SessionOut:
        """The API view of a stored session, its lease judged at ``now``."""
        return cls(
            id=record.uuid,
            title=record.title,
            metadata=record.meta,
            created_at=record.created_at,
            updated_at=record.updated_at,
            message_count=record.message_count,
            char_count=record.char_count,
            token_count=record.token_count,
            context_chars=record.context_chars,
            context_tokens=record.context_tokens,
            summarized_through=record.summarized_through,
            due=record.due_since is not None,
            compacting=record.leased_at(now),
            failures=record.failures,
            last_error=record.last_error,
        )


class SessionPage(BaseModel):
    """One page of sessions, newest first."""

    items: list[SessionOut]
    total: int
    limit: int
    offset: int


class AppendMessages(BaseModel):
    """Body of ``POST /sessions/{id}/messages``: OpenAI chat messages, in order."""

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]] = Field(min_length=1)

    @field_validator("messages")
    @classmethod
    def _storable(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [storable(m) for m in messages]


class Appended(BaseModel):
    """The record ids of the request's messages, whether a compaction is now due, and how
    many leading messages the session already held by their ``id`` (not appended again)."""

    ids: list[int]
    due: bool
    held: int = 0


class MessagePage(BaseModel):
    """Messages of the raw record, in order; ``next_after`` continues the listing."""

    items: list[dict[str, Any]]
    next_after: int | None


class Context(BaseModel):
    """What to send to the model now, with its size."""

    messages: list[dict[str, Any]]
    """Clean OpenAI chat messages: what a provider accepts as they are."""
    ids: list[int | str | None]
    """Each message's id in the session (None for the summary), beside the messages."""
    chars: int
    tokens: int
    message_count: int
    summarized_through: int | None
    summary_rows: int
    due: bool
    compaction_retry_at: dt.datetime | None = None
    """Set while the session's compaction is backing off after a failure: no pass (not even
    ``?compact=sync``) runs before then."""


class SummaryOut(BaseModel):
    """One row of the summary chain."""

    id: int
    episode_range: str
    first_message_id: int
    last_message_id: int
    content: str
    instructions: list[str]
    carried: list[int]
    messages: int
    source_chars: int
    chars: int
    tokens: int
    strategy: str
    model: str | None
    created_at: str
    superseded_by: int | None


class CompactOut(BaseModel):
    """What ``POST /sessions/{id}/compact`` did."""

    path: str
    reason: str | None
    summary: SummaryOut | None


class EpisodeStats(BaseModel):
    """Design B's gate aggregate, read from the session's counters."""

    count: int
    token_sum: int
    char_sum: int
    max_id: int | None
    summarized_through: int | None


class Stats(BaseModel):
    """``GET /stats``."""

    summary: dict[str, int | float]
