"""What the web console needs beyond the resources: its settings, the compaction history,
and a chat turn answered by the configured chat model."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from recap_memory.api_models import CompactionPassOut
from recap_memory.llm.base import ModelOptions
from recap_memory.messages import Message, to_openai
from recap_memory.service.deps import State, Tenant
from recap_memory.service.schemas import storable

router = APIRouter(tags=["console"])
log = logging.getLogger("recap_memory.service")
CHAT_OPTIONS = ModelOptions(temperature=0.7, max_tokens=800)


@router.get("/config")
async def console_config(_: Tenant, state: State) -> dict[str, Any]:
    """The settings a client needs: the trigger, the keep budget, the hard cap (None when
    unset), the summarizer, whether a chat model answers."""
    policy = state.store.policy
    return {
        "threshold": policy.trigger.limits(),
        "keep": {policy.keep.unit: policy.keep.value},
        "max": {policy.max.unit: policy.max.value} if policy.max is not None else None,
        "summarizer": state.runner.compactor.summarizer.name,
        "chat_model": getattr(state.chat_model, "name", None) if state.chat_model else None,
    }


@router.get("/stats/compactions")
async def compaction_history(
    tenant: Tenant, state: State, limit: Annotated[int, Query(ge=1, le=1000)] = 200
) -> list[CompactionPassOut]:
    """The latest committed passes, oldest first: when, which session, how big before and
    after, and the tokens saved so far."""
    passes = await state.store.compaction_history(tenant, limit=limit)
    return [CompactionPassOut.model_validate(p, from_attributes=True) for p in passes]


class ChatTurn(BaseModel):
    """Body of ``POST /sessions/{id}/chat``: what the person typed."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=100_000)

    @field_validator("content")
    @classmethod
    def _storable(cls, value: str) -> str:
        return str(storable(value))


@router.post(
    "/sessions/{session_id}/chat",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Server-Sent Events: user, delta (text pieces), done, error",
            "content": {"text/event-stream": {}},
        }
    },
)
async def chat(session_id: str, body: ChatTurn, tenant: Tenant, state: State) -> StreamingResponse:
    """Append the user's message and stream the chat model's answer over the compacted
    context (Design B's chat flow) as Server-Sent Events: ``user`` (its id), ``delta``
    (pieces of text), then ``done`` (the stored answer) or ``error``."""
    model = state.chat_model
    if model is None:
        raise HTTPException(409, "no chat model is configured: set RECAP_CHAT_MODEL")
    user = Message(role="user", content=body.content)
    appended = await state.store.append(tenant, session_id, [user])
    _, loaded = await state.store.load_context(tenant, session_id)
    turns = [
        {"role": m.role if m.role != "tool" else "user", "content": m.text} for m in loaded.view()
    ]

    async def events() -> AsyncIterator[str]:
        yield _sse("user", {"id": appended.ids[0]})
        pieces: list[str] = []
        try:
            async for piece in model.stream(turns, CHAT_OPTIONS):
                pieces.append(piece)
                yield _sse("delta", {"text": piece})
        except Exception as exc:  # the model failed: the user's message stays, no answer
            log.warning("chat model failed for session %s: %s", session_id, exc)
            yield _sse("error", {"message": str(exc)})
            return
        reply = Message(role="assistant", content="".join(pieces))
        stored = await state.store.append(tenant, session_id, [reply])
        if (appended.due or stored.due) and state.worker is not None:
            state.worker.wake()
        yield _sse("done", {"assistant": to_openai(reply.replace(id=stored.ids[0]))})

    return StreamingResponse(events(), media_type="text/event-stream")


def _sse(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"
