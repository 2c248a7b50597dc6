"""Sessions and their raw message record."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from recap_memory.messages import Message, from_openai, to_openai
from recap_memory.offload import LARGE_BODY_BYTES, off_loop
from recap_memory.service.bodies import documented, json_body
from recap_memory.service.deps import State, Tenant
from recap_memory.service.errors import PayloadTooLarge
from recap_memory.service.idempotency import IdempotencyKey, idempotency, mark_replayed
from recap_memory.service.schemas import (
    Appended,
    AppendMessages,
    MessagePage,
    NewSession,
    SessionOut,
    SessionPage,
    session_out,
)
from recap_memory.service.settings import ServiceSettings
from recap_memory.store.models import SessionRecord

router = APIRouter(tags=["sessions"])
MAX_ID = 2**63 - 1
"""The largest id (and offset) either database holds: larger ones are refused with 422."""


async def existing_session(session_id: str, tenant: Tenant, state: State) -> SessionRecord:
    """The session named in the path (404 when it is not this tenant's)."""
    return await state.store.get_session(tenant, session_id)


Session = Annotated[SessionRecord, Depends(existing_session)]


@router.post("/sessions", status_code=201)
async def create_session(
    tenant: Tenant,
    state: State,
    response: Response,
    key: IdempotencyKey = None,
    body: NewSession | None = None,
) -> SessionOut:
    """Start a new, empty session (once per ``Idempotency-Key``)."""
    body = body or NewSession()
    asked = idempotency(key, "POST /sessions", body)
    created = await state.store.create_session(
        tenant, title=body.title, metadata=body.metadata, idempotency=asked
    )
    mark_replayed(response, created.replayed)
    return session_out(created.session, state.store.clock())


@router.get("/sessions")
async def list_sessions(
    tenant: Tenant,
    state: State,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
) -> SessionPage:
    """The tenant's sessions, newest first."""
    records, total = await state.store.list_sessions(tenant, limit=limit, offset=offset)
    return SessionPage(
        items=[session_out(r, state.store.clock()) for r in records],
        total=total,
        limit=limit,
        offset=offset,
    )


@router.get("/sessions/{session_id}")
async def get_session(session: Session, state: State) -> SessionOut:
    """One session with its sizes and compaction state."""
    return session_out(session, state.store.clock())


@router.delete("/sessions/{session_id}", status_code=204)
async def delete_session(session_id: str, tenant: Tenant, state: State) -> Response:
    """Delete the session, its messages and summaries."""
    await state.store.delete_session(tenant, session_id)
    return Response(status_code=204)


@router.post(
    "/sessions/{session_id}/messages", status_code=201, openapi_extra=documented(AppendMessages)
)
async def append_messages(
    session_id: str,
    body: Annotated[AppendMessages, json_body(AppendMessages)],
    tenant: Tenant,
    state: State,
    request: Request,
    response: Response,
    key: IdempotencyKey = None,
) -> Appended:
    """Append messages to the record, exactly once: leading messages whose ``id`` the
    session already holds are not appended again, and a retry with the same
    ``Idempotency-Key`` writes nothing more. A compaction that becomes due runs in the
    background (the response never waits for it)."""
    large = int(request.headers.get("content-length") or 0) >= LARGE_BODY_BYTES
    messages = await off_loop(large, parse_batch, body.messages, state.settings)
    operation = f"POST /sessions/{session_id.lower()}/messages"
    asked = await off_loop(large and key is not None, idempotency, key, operation, body)
    appended = await state.store.append(tenant, session_id, messages, idempotency=asked)
    mark_replayed(response, appended.replayed)
    if not appended.replayed:
        state.metrics.messages.inc(len(messages) - appended.held)
    if appended.due and state.worker is not None:
        state.worker.wake()
    return Appended(ids=appended.ids, due=appended.due, held=appended.held)


def parse_batch(raw: list[dict[str, object]], settings: ServiceSettings) -> list[Message]:
    """Messages from a request body, within the size limits (422 / 413 otherwise)."""
    if len(raw) > settings.max_messages_per_request:
        raise PayloadTooLarge(
            f"{len(raw)} messages in one request, over the limit of "
            f"{settings.max_messages_per_request}; send them in several requests"
        )
    messages = []
    for i, item in enumerate(raw):
        message = from_openai(item, where=f"messages.{i}")
        size = len(message.countable_text)
        if size > settings.max_message_chars:
            raise PayloadTooLarge(
                f"messages.{i} has {size} characters, over the limit of "
                f"{settings.max_message_chars} (RECAP_MAX_MESSAGE_CHARS)"
            )
        messages.append(message)
    return messages


@router.get("/sessions/{session_id}/messages")
async def list_messages(
    session_id: str,
    tenant: Tenant,
    state: State,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    after: Annotated[int | None, Query(ge=0, le=MAX_ID)] = None,
) -> MessagePage:
    """The raw record in order (compaction never removes a message from it)."""
    messages = await state.store.list_messages(tenant, session_id, after=after, limit=limit)
    next_after = int(messages[-1].id or 0) if len(messages) == limit else None
    return MessagePage(items=[to_openai(m) for m in messages], next_after=next_after)
