"""``/v1``: an OpenAI-compatible chat completions endpoint in front of the upstream model,
the upstream's model list, and compaction over HTTP."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

import httpx
from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from recap_memory.digests import chained
from recap_memory.errors import InputError
from recap_memory.messages import Message, from_openai, to_openai
from recap_memory.policy import Policy
from recap_memory.service.bodies import documented, json_body
from recap_memory.service.deps import ServiceState, State, Tenant
from recap_memory.service.errors import error_response
from recap_memory.service.proxy.contexts import Prepared, for_request, for_session
from recap_memory.service.proxy.stream import StreamAssembler
from recap_memory.service.proxy.upstream import NoUpstream, Upstream, returned_headers

router = APIRouter(prefix="/v1", tags=["openai-compatible"])
log = logging.getLogger("recap_memory.service")
COMPACTED = "X-Recap-Compacted"


class ChatCompletion(BaseModel):
    """Body of ``POST /v1/chat/completions``: OpenAI's, every other field forwarded as is."""

    model_config = ConfigDict(extra="allow")

    messages: list[dict[str, Any]] = Field(min_length=1)


@router.post("/chat/completions", response_model=None, openapi_extra=documented(ChatCompletion))
async def chat_completions(
    chat: Annotated[ChatCompletion, json_body(ChatCompletion)],
    request: Request,
    tenant: Tenant,
    state: State,
    session: Annotated[str | None, Header(alias="X-Recap-Session", max_length=200)] = None,
) -> Response:
    """OpenAI's chat completions, answered by the upstream model over the compacted
    context: with ``X-Recap-Session``, the stored session's (the request's new messages
    appended, the reply too); without it, the request's own history. Everything else in
    the body is forwarded untouched; the upstream's answer comes back unchanged."""
    upstream = _upstream(state)
    messages = _messages(chat.messages)
    body = chat.model_dump()
    request_id = request.state.request_id
    if session is not None:
        prepared = await for_session(state, tenant, session, messages, request_id)
    else:
        prepared = await for_request(state, tenant, messages, state.prefixes)
    caller = dict(request.headers)
    try:
        answer = await upstream.send(
            "POST", "/chat/completions", caller, {**body, "messages": prepared.messages}
        )
    except httpx.TimeoutException:
        return error_response(504, "upstream_timeout", "the upstream model did not answer in time")
    except httpx.TransportError as exc:
        return _unreachable(exc)
    headers = {**returned_headers(answer), COMPACTED: prepared.compacted}
    if body.get("stream") is True and answer.status_code == 200:
        return StreamingResponse(
            _relay(answer, state, tenant, prepared), headers=headers, status_code=200
        )
    content = await answer.aread()
    await answer.aclose()
    if answer.status_code == 200 and prepared.session is not None:
        await _keep_reply(state, tenant, prepared, _reply(content))
    return Response(content, status_code=answer.status_code, headers=headers)


@router.get("/models", response_model=None)
async def models(request: Request, _: Tenant, state: State) -> Response:
    """The upstream's ``/models``, passed through."""
    try:
        answer = await _upstream(state).send("GET", "/models", dict(request.headers))
    except httpx.TransportError as exc:
        return _unreachable(exc)
    content = await answer.aread()
    await answer.aclose()
    return Response(content, status_code=answer.status_code, headers=returned_headers(answer))


class CompactRequest(BaseModel):
    """Body of ``POST /v1/compact``: OpenAI chat messages, and policy fields to change."""

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]] = Field(min_length=1)
    policy: dict[str, Any] = Field(default_factory=dict)
    """Fields of :class:`recap_memory.policy.Policy` (``trigger``, ``keep``, …) to override."""


class CompactResponse(BaseModel):
    """The compacted messages (ready for a model) and what the pass did."""

    messages: list[dict[str, Any]]
    report: dict[str, Any]


@router.post("/compact")
async def compact(body: CompactRequest, _: Tenant, state: State) -> CompactResponse:
    """Stateless compaction over HTTP, for apps that call their model themselves: what
    ``recap compact`` does to a file."""
    messages = _messages(body.messages)
    compactor = state.runner.compactor
    if body.policy:
        merged = {**compactor.policy.model_dump(), **body.policy}
        try:
            compactor = compactor.with_policy(Policy.model_validate(merged))
        except ValueError as exc:
            raise InputError(f"policy: {exc}", where="policy") from exc
    result = await compactor.compact(messages)
    return CompactResponse(
        messages=[to_openai(m, recap_fields=False) for m in result.messages],
        report=json.loads(json.dumps(result.report.as_dict(), default=str)),
    )


def _upstream(state: ServiceState) -> Upstream:
    if state.upstream is None:
        raise NoUpstream
    return state.upstream


def _messages(raw: list[dict[str, Any]]) -> list[Message]:
    return [from_openai(item, where=f"messages.{i}") for i, item in enumerate(raw)]


def _reply(content: bytes) -> dict[str, Any] | None:
    """The assistant message of a chat completion's body (None when it has none)."""
    try:
        message = json.loads(content)["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return message if isinstance(message, dict) else None


async def _relay(
    answer: httpx.Response, state: ServiceState, tenant: str, prepared: Prepared
) -> AsyncIterator[bytes]:
    """The upstream's stream, chunk by chunk; a client that goes away closes the upstream
    request. A stream that ran to ``[DONE]`` leaves its reply in the session."""
    assembler = StreamAssembler()
    try:
        async for chunk in answer.aiter_raw():
            assembler.feed(chunk)
            yield chunk
    finally:
        await answer.aclose()
    if prepared.session is not None:
        await _keep_reply(state, tenant, prepared, assembler.message())


async def _keep_reply(
    state: ServiceState, tenant: str, prepared: Prepared, reply: dict[str, Any] | None
) -> None:
    """Append the upstream's reply to the session (chained to the request's messages, so
    the next request, re-sending it, finds it held)."""
    if reply is None or prepared.session is None:
        return
    try:
        message = from_openai({k: v for k, v in reply.items() if v is not None or k == "content"})
        [digest] = chained([message], prepared.head or "")
        await state.store.append(tenant, prepared.session, [message.replace(id=digest)])
    except Exception:  # the caller has its answer; the next full request re-sends the reply
        log.warning("the reply could not be kept in session %s", prepared.session, exc_info=True)


def _unreachable(exc: Exception) -> Response:
    return error_response(
        502,
        "upstream_unavailable",
        f"the upstream model could not be reached ({type(exc).__name__}); check RECAP_UPSTREAM_URL",
    )
