"""What the upstream model receives for a chat completion: a stored session's compacted
context (session mode) or the request's own history compacted (stateless mode)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from recap_memory.digests import chained
from recap_memory.errors import ConflictError, NotFoundError
from recap_memory.messages import Message, to_openai
from recap_memory.service.compaction import accounted_path
from recap_memory.service.deps import ServiceState
from recap_memory.service.proxy.prefixes import PrefixSummaries
from recap_memory.service.routes.context import model_context
from recap_memory.store import Sessionless, usage_events

NAMES = uuid.UUID("6f1c3b8e-3a52-4f0e-9a57-2c1f6b0d7e41")
"""Namespace of the session ids made from ``X-Recap-Session`` names that are not UUIDs."""


@dataclass(frozen=True)
class Prepared:
    """The messages for the upstream, what recap did to them (``X-Recap-Compacted``), and,
    in session mode, the session and the digest the reply is chained to."""

    messages: list[dict[str, Any]]
    compacted: str
    session: str | None = None
    head: str | None = None


def session_id(tenant: str, name: str) -> str:
    """The session an ``X-Recap-Session`` value names: itself when a UUID, else a UUID
    derived from the tenant and the name (the same every time)."""
    try:
        return str(uuid.UUID(name))
    except ValueError:
        return str(uuid.uuid5(NAMES, f"{tenant}\n{name}"))


async def for_session(
    state: ServiceState, tenant: str, name: str, messages: list[Message], request_id: str
) -> Prepared:
    """Append the request's messages the session does not hold yet (the whole history
    re-sent, or only the new turn), then the session's compacted context."""
    session = session_id(tenant, name)
    digests = chained(messages)
    try:
        history = await state.store.client_history(tenant, session, digests[0])
    except NotFoundError:
        await _create(state, tenant, name, session)
        history = await state.store.client_history(tenant, session, digests[0])
    if history.messages and history.head in digests:  # the conversation re-sent, and more
        start = digests.index(history.head) + 1
        new, ids = messages[start:], digests[start:]
    elif history.messages and history.holds_first:
        raise ConflictError(
            f"the conversation sent differs from what session {name!r} holds, or stops "
            "before its last message (a retried or regenerated turn): send the whole "
            "conversation as it went on, only the new messages, or a new X-Recap-Session "
            "for a branch"
        )
    else:  # the first request, or only the new messages
        new, ids = messages, chained(messages, history.head or "")
    due = True  # nothing appended: a pass may still be due (or running)
    if new:
        appended = await state.store.append(
            tenant, session, [m.replace(id=i) for m, i in zip(new, ids, strict=True)]
        )
        due = appended.due or appended.session.leased_at(state.store.clock())
    record, loaded, view = await model_context(
        state, tenant, session, request_id, sync=due, limit=state.store.policy.max
    )
    size = state.store.meter.messages(view)
    folded = sum(row.messages for row in loaded.chain.rows)
    compacted = (
        f"session={session}; folded={folded}; record_chars={record.char_count}; "
        f"context_chars={size.chars}"
    )
    return Prepared(
        [to_openai(m, recap_fields=False) for m in view],
        compacted,
        session,
        ids[-1] if new else history.head,
    )


async def _create(state: ServiceState, tenant: str, name: str, session: str) -> None:
    """Create the session ``name`` stands for (on its first use)."""
    try:
        await state.store.create_session(
            tenant, title=name, metadata={"created_by": "proxy"}, session_uuid=session
        )
    except IntegrityError:  # made meanwhile, or the id is another tenant's
        try:
            await state.store.get_session(tenant, session)
        except NotFoundError:
            raise ConflictError(
                f"X-Recap-Session {name!r} cannot be used: choose another id"
            ) from None


async def for_request(
    state: ServiceState, tenant: str, messages: list[Message], cache: PrefixSummaries
) -> Prepared:
    """The request's own history, compacted when over the trigger; the head made for a
    prefix seen before is reused, so only what is new is folded."""
    digests = chained(messages)
    known, head = cache.longest(tenant, digests)
    history = [*head, *(to_openai(m, recap_fields=False) for m in messages[known:])]
    result = await state.runner.compactor.compact(history)
    report = result.report
    if report.compacted or report.usage:  # a pass ran: its spend counts for the tenant
        path = accounted_path(report) if report.compacted else report.path
        spent = usage_events(Sessionless(tenant), result, path=path, reason=report.reason)
        await state.store.record_events(spent)
    if not report.compacted or report.covered is None:
        note = f"reused={known}" if known else "none"
        return Prepared(history, note)
    last = report.covered[1]
    tail = len(history) - last - 1
    folded = known + last + 1 - len(head)
    if 0 < folded <= len(messages):
        cache.keep(tenant, digests[folded - 1], result.messages[: len(result.messages) - tail])
    compacted = (
        f"folded={folded}; summary_chars={report.summary_chars}; "
        f"chars={report.size_before.chars}->{report.size_after.chars}"
    )
    return Prepared(list(result.messages), compacted)
