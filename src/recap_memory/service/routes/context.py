"""What the model receives now, the summary chain, and compaction on demand."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import time
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request

from recap_memory.errors import BusyError, ContextTooLargeError, InputError
from recap_memory.fitting import fit, too_large
from recap_memory.messages import Message, to_openai
from recap_memory.policy import Budget
from recap_memory.service.compaction import summary_data
from recap_memory.service.deps import ServiceState, State, Tenant
from recap_memory.service.routes.sessions import Session
from recap_memory.service.schemas import CompactOut, Context, EpisodeStats, SummaryOut
from recap_memory.store import Loaded
from recap_memory.store.models import SessionRecord

router = APIRouter(tags=["context"])
SYNC_POLL_S = 0.1


@router.get("/sessions/{session_id}/context")
async def get_context(
    session_id: str,
    request: Request,
    tenant: Tenant,
    state: State,
    compact: Annotated[Literal["sync", "background"], Query()] = "background",
    max_chars: Annotated[int | None, Query(gt=0)] = None,
    max_tokens: Annotated[int | None, Query(gt=0)] = None,
) -> Context:
    """System messages, the summary (one user message), then the un-summarized tail.

    ``compact=sync`` first runs a due compaction inline (Design A's pre-call mode),
    or waits for one already running, at most ``RECAP_SYNC_WAIT_S`` in all (a longer pass
    lands later); a session backing off after a failed pass is answered at once, with
    ``compaction_retry_at``. ``max_chars`` or ``max_tokens`` make the size a
    promise: a due pass runs inline first, then the largest tool outputs are cut to
    head and tail (then masked) until the context fits; 413 when even that cannot.
    """
    if max_chars is not None and max_tokens is not None:
        raise InputError("give max_chars or max_tokens, not both", where="query")
    limit = Budget(chars=max_chars, tokens=max_tokens) if max_chars or max_tokens else None
    record, loaded, view = await model_context(
        state, tenant, session_id, request.state.request_id, sync=compact == "sync", limit=limit
    )
    retry_at = _backing_off(record, state.store.clock())
    size = state.store.meter.messages(view)
    return Context(
        messages=[to_openai(m, recap_fields=False) for m in view],
        ids=[m.id for m in view],
        chars=size.chars,
        tokens=size.tokens,
        message_count=size.messages,
        summarized_through=loaded.through,
        summary_rows=len(loaded.chain.rows),
        due=record.due_since is not None,
        compaction_retry_at=retry_at,
    )


async def model_context(
    state: ServiceState,
    tenant: str,
    session_id: str,
    request_id: str,
    *,
    sync: bool,
    limit: Budget | None,
) -> tuple[SessionRecord, Loaded, list[Message]]:
    """The session, what was loaded, and the messages a model receives now: with ``sync``
    or a ``limit``, after the due pass (run or waited for, within ``RECAP_SYNC_WAIT_S``);
    within ``limit`` (tool outputs cut, then masked) or :class:`ContextTooLargeError`."""
    if sync or limit is not None:
        await _settle(state, tenant, session_id, request_id)
    record, loaded = await state.store.load_context(tenant, session_id)
    view = loaded.view()
    if limit is not None:
        view, _ = fit(view, limit, state.store.meter)
        if not limit.allows(state.store.meter.messages(view)):
            raise ContextTooLargeError(too_large(view, limit, state.store.meter))
    return record, loaded, view


def _backing_off(record: SessionRecord, now: dt.datetime) -> dt.datetime | None:
    """When the session's next pass may run, while it waits out a failure's backoff."""
    if record.due_since is None or record.next_attempt_at is None:
        return None
    return record.next_attempt_at if record.next_attempt_at > now else None


async def _settle(state: ServiceState, tenant: str, session_id: str, request_id: str) -> None:
    """Run the session's due compaction now, or wait for the one running — all within
    ``sync_wait_s``: a pass still running then finishes in the background. A session
    backing off after a failure is not run again before its time."""
    deadline = time.monotonic() + state.settings.sync_wait_s
    while True:
        record = await state.store.get_session(tenant, session_id)
        now = state.store.clock()
        leased = record.leased_at(now)
        if (record.due_since is None or _backing_off(record, now)) and not leased:
            return
        if not leased:
            with contextlib.suppress(BusyError):  # claimed elsewhere meanwhile: wait for it
                task = await state.runner.start_now(tenant, session_id, request_id=request_id)
                await asyncio.wait({task}, timeout=max(0.0, deadline - time.monotonic()))
                return  # done, or left to finish under its lease
        if time.monotonic() > deadline:
            return  # serve the context as it is; the running pass will land later
        await asyncio.sleep(SYNC_POLL_S)


@router.get("/sessions/{session_id}/summaries")
async def list_summaries(
    session_id: str,
    tenant: Tenant,
    state: State,
    include_superseded: bool = False,
) -> list[SummaryOut]:
    """The summary chain in order, each with its ``episode_range`` (message ids)."""
    rows = await state.store.summaries(tenant, session_id, include_superseded=include_superseded)
    return [SummaryOut(**summary_data(r)) for r in rows]


@router.post("/sessions/{session_id}/compact")
async def compact_now(
    session_id: str, request: Request, tenant: Tenant, state: State
) -> CompactOut:
    """Compact now, even under the threshold (the recent turns are still kept)."""
    outcome = await state.runner.run_now(
        tenant, session_id, force=True, request_id=request.state.request_id
    )
    summary = SummaryOut(**summary_data(outcome.summary)) if outcome.summary else None
    return CompactOut(path=outcome.path, reason=outcome.reason, summary=summary)


@router.get("/sessions/{session_id}/episode-stats")
async def episode_stats(session: Session) -> EpisodeStats:
    """Design B's aggregate (count, token sum, max id), read from counters — O(1)."""
    return EpisodeStats(
        count=session.message_count,
        token_sum=session.token_count,
        char_sum=session.char_count,
        max_id=session.last_message_id,
        summarized_through=session.summarized_through,
    )
