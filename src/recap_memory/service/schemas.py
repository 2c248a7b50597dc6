"""Request and response bodies of the HTTP API: the requests here, the responses defined
once in :mod:`recap_memory.api_models` (which the client shares) and re-exported."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recap_memory.api_models import (
    Appended,
    CompactOut,
    Context,
    EpisodeStats,
    MessagePage,
    SessionOut,
    SessionPage,
    Stats,
    SummaryOut,
)
from recap_memory.inputs import check_json
from recap_memory.store.models import SessionRecord

__all__ = [
    "AppendMessages",
    "Appended",
    "CompactOut",
    "Context",
    "EpisodeStats",
    "MessagePage",
    "NewSession",
    "SessionOut",
    "SessionPage",
    "Stats",
    "SummaryOut",
    "session_out",
    "storable",
]


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


class AppendMessages(BaseModel):
    """Body of ``POST /sessions/{id}/messages``: OpenAI chat messages, in order."""

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]] = Field(min_length=1)

    @field_validator("messages")
    @classmethod
    def _storable(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [storable(m) for m in messages]


def session_out(record: SessionRecord, now: dt.datetime) -> SessionOut:
    """The API view of a stored session, its lease judged at ``now``."""
    return SessionOut(
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
