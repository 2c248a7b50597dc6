"""Server-Sent Events of a session's compactions: the real completion signal."""

from __future__ import annotations

from collections.abc import AsyncIterable

from fastapi import APIRouter
from fastapi.sse import EventSourceResponse, ServerSentEvent

from recap_memory.service.deps import State
from recap_memory.service.routes.sessions import Session
from recap_memory.service.schemas import session_out

router = APIRouter(tags=["events"])


@router.get("/sessions/{session_id}/events", response_class=EventSourceResponse)
async def session_events(session: Session, state: State) -> AsyncIterable[ServerSentEvent]:
    """``session.state`` first (the session as it is), then ``summarization.started``,
    ``summarization.finished`` (the new summary's range and sizes),
    ``summarization.skipped`` and ``summarization.failed`` (with the reason), or
    ``summarization.superseded`` when the pass lost its session to another worker (whose
    own events follow) or to a delete. The stream ends when the service shuts down."""
    async with state.bus.subscribe(session.uuid) as events:
        state_now = session_out(session, state.store.clock()).model_dump(mode="json")
        yield ServerSentEvent(event="session.state", data=state_now)
        async for event in events:
            yield ServerSentEvent(event=event.name, data=event.data)
