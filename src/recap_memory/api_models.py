"""The memory service's response bodies and events, as plain pydantic models.

One definition of each, shared by the service (which answers with them, see
:mod:`recap_memory.service.schemas`) and by :mod:`recap_memory.client` (which reads
them): this module imports no server package, so the core install can use the client.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict


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


class SessionPage(BaseModel):
    """One page of sessions, newest first."""

    items: list[SessionOut]
    total: int
    limit: int
    offset: int


class Appended(BaseModel):
    """The record ids of the request's messages, whether a compaction is now due, and how
    many leading messages the session already held by their ``id`` (not appended again)."""

    ids: list[int]
    due: bool
    held: int = 0


class MessagePage(BaseModel):
    """Messages of the raw record, in order (each an OpenAI message with ``id``,
    ``created_at`` and the client's ``client_id`` when given); ``next_after`` continues the
    listing."""

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
    first_position: int | None
    """Where the covered range starts in the session, counting its messages from 1."""
    last_position: int | None
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


class CompactionPassOut(BaseModel):
    """One committed pass in ``GET /stats/compactions``."""

    at: dt.datetime
    path: str
    session: str | None
    """The folded session's id; None for a stateless (proxy) pass or a deleted session."""
    title: str | None
    chars_before: int
    chars_after: int
    messages_removed: int
    tokens_saved: int
    tokens_saved_total: int
    """Tokens saved by the tenant's passes up to and including this one."""


class ContextChange(BaseModel):
    """A pass's effect on the session's context: its size before and after."""

    chars_before: int
    chars_after: int
    tokens_before: int
    tokens_after: int


class Event(BaseModel):
    """One event of ``GET /sessions/{id}/events``: ``event`` is its SSE name; the
    subclasses below hold each kind's data (fields a newer service adds are kept, in
    ``model_extra``)."""

    model_config = ConfigDict(extra="allow")

    event: str
    session_id: str


class SessionState(Event):
    """``session.state``, the stream's first event: the session as it is."""

    session: SessionOut


class SummarizationStarted(Event):
    """``summarization.started``: a pass over the session began."""


class SummarizationFinished(Event):
    """``summarization.finished``: a pass committed its summary."""

    path: str
    reason: str | None
    summary: SummaryOut
    messages_removed: int
    chars_removed: int
    context: ContextChange


class SummarizationSkipped(Event):
    """``summarization.skipped``: the pass found nothing to summarize."""

    reason: str


class SummarizationFailed(Event):
    """``summarization.failed``: the pass failed; the session stays due, retried after
    ``retry_in_s``."""

    reason: str
    retry_in_s: float


class SummarizationSuperseded(Event):
    """``summarization.superseded``: the pass lost its session (to another worker, whose
    own events follow, or to a delete)."""

    reason: str


class OtherEvent(Event):
    """An event this version does not know by name: its data as sent."""

    data: dict[str, Any]


EVENT_TYPES: dict[str, type[Event]] = {
    "summarization.started": SummarizationStarted,
    "summarization.finished": SummarizationFinished,
    "summarization.skipped": SummarizationSkipped,
    "summarization.failed": SummarizationFailed,
    "summarization.superseded": SummarizationSuperseded,
}
"""The compaction events by name (``session.state`` carries a whole session instead)."""


def parse_event(name: str, data: dict[str, Any]) -> Event:
    """The typed event of an SSE ``event:`` name and its ``data:`` JSON object."""
    if name == "session.state":
        return SessionState(event=name, session_id=data["id"], session=SessionOut(**data))
    kind = EVENT_TYPES.get(name)
    if kind is None:
        return OtherEvent(event=name, session_id=str(data.get("session_id", "")), data=data)
    return kind.model_validate({**data, "event": name})
