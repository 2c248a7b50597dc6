"""The repository: every read and write of sessions, messages, summaries and usage events.

Each public method is one short transaction. The rules it keeps:

- appending locks the session row, checks the new messages against the tool
  calls still open, inserts them and updates the gate counters in the same
  transaction (so the gate never sums or loads the session);
- compaction is claimed with a lease (``FOR UPDATE SKIP LOCKED`` on
  PostgreSQL, SQLite's single writer) and committed only while the lease and
  the summarized-through id are still the ones it started from, with the new
  summary, the superseded rows, the counters and the usage events in one
  transaction; a unique (session, last message) key refuses a second summary
  of the same range;
- messages are never updated or deleted by compaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sqlalchemy import Row, Select, Text, cast, delete, func, insert, or_, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from recap_memory.chain import Chain, Ref, SummaryRow
from recap_memory.clock import Clock, utcnow
from recap_memory.compactor import CompactionResult
from recap_memory.counting import Meter, Size
from recap_memory.errors import (
    BusyError,
    ConflictError,
    IdempotencyKeyReusedError,
    InputError,
    InvalidHistoryError,
    NotFoundError,
    OutcomeUnknownError,
)
from recap_memory.llm.base import Usage
from recap_memory.messages import (
    INSTRUCTION_ROLES,
    Message,
    ToolCall,
    from_openai,
    to_openai,
    validate_history,
)
from recap_memory.offload import MANY_MESSAGES, off_loop
from recap_memory.policy import Policy
from recap_memory.record import RecordReader
from recap_memory.store.models import (
    IdempotencyRecord,
    MessageRecord,
    SessionRecord,
    SummaryRecord,
    UsageEvent,
)

_T = TypeVar("_T")


@dataclass(frozen=True)
class Claim:
    """A compaction lease on one session."""

    session_id: int
    uuid: str
    tenant: str
    token: str


@dataclass(frozen=True)
class Loaded:
    """What a compaction reads: the un-summarized messages and the active summary chain."""

    body: list[Message]
    """System messages, messages carried by the chain, then every message after it."""
    chain: Chain
    rows: list[SummaryRecord]
    through: int | None
    pending: int

    def view(self) -> list[Message]:
        """The context the model receives: system messages already summarized past, the
        summary chain as one user message, then the carried and recent messages in order."""
        through = self.through if self.through is not None else -1
        front = [m for m in self.body if m.is_system and int(m.id or 0) <= through]
        rest = [m for m in self.body if not (m.is_system and int(m.id or 0) <= through)]
        summary = self.chain.message()
        return [*front, *([summary] if summary else []), *rest]


@dataclass(frozen=True)
class Appended:
    """The ids of the batch's messages, whether the session is now due, and how many of the
    messages the session already held (by their client ids: those were not appended again)."""

    ids: list[int]
    due: bool
    session: SessionRecord
    held: int = 0
    replayed: bool = False
    """True when this answers a retry of an earlier request with the same Idempotency-Key."""

    def answer(self) -> dict[str, Any]:
        """What is kept under the request's Idempotency-Key."""
        return {"ids": self.ids, "due": self.due, "held": self.held}


@dataclass(frozen=True)
class Created:
    """A session made by :meth:`Store.create_session` (or, ``replayed``, by an earlier
    request with the same Idempotency-Key)."""

    session: SessionRecord
    replayed: bool = False


@dataclass(frozen=True)
class History:
    """See :meth:`Store.client_history`."""

    messages: int
    head: str | None
    holds_first: bool


@dataclass(frozen=True)
class Idempotency:
    """A request's ``Idempotency-Key`` and the fingerprint of what it asked."""

    key: str
    fingerprint: str


class LeaseLost(Exception):
    """The lease expired and another worker took the session; this result is dropped."""


class Store:
    """The session store over one async engine (SQLite or PostgreSQL)."""

    def __init__(
        self,
        engine: AsyncEngine,
        policy: Policy,
        meter: Meter | None = None,
        *,
        clock: Clock = utcnow,
        keys_kept_for: dt.timedelta = dt.timedelta(hours=24),
    ) -> None:
        self.engine = engine
        self.policy = policy
        self.meter = meter or Meter()
        self.clock = clock
        """What "now" is for leases, retry backoff and due times (tests pass a manual one)."""
        self.keys_kept_for = keys_kept_for
        """How long an Idempotency-Key's answer is kept for its retries."""
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        # SQLite has one writer and every transaction here takes the lock up front; a
        # process-wide queue hands it over in order instead of busy-polling for it.
        self._queue = asyncio.Lock() if engine.dialect.name == "sqlite" else None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """One transaction: committed when the block ends, rolled back on any error. A
        database error before the commit means nothing was written; one raised by the
        commit itself leaves the outcome unknown (:class:`OutcomeUnknownError`)."""
        async with self._queue or nullcontext(), self._sessions() as session:
            try:
                yield session
                await session.flush()
            except BaseException:
                with contextlib.suppress(DBAPIError):
                    await session.rollback()
                raise
            try:
                await session.commit()
            except DBAPIError as exc:
                raise OutcomeUnknownError(
                    f"the database failed while committing ({type(exc).__name__}): the write "
                    "may or may not have happened"
                ) from exc

    async def schema_revision(self) -> str | None:
        """The database's schema revision (raises when the database cannot be reached)."""
        async with self.engine.connect() as connection:
            revision = await connection.scalar(text("SELECT version_num FROM alembic_version"))
            return None if revision is None else str(revision)

    async def close(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()

    # sessions -----------------------------------------------------------------------------

    async def create_session(
        self,
        tenant: str,
        *,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency: Idempotency | None = None,
        session_uuid: str | None = None,
    ) -> Created:
        """A new, empty session for ``tenant`` (with ``session_uuid`` as its id when given);
        a retry under the same ``idempotency`` key returns the session the first request
        made."""

        async def write() -> Created:
            async with self.transaction() as tx:
                if idempotency and (done := await self._answered(tx, tenant, idempotency)):
                    return Created(await self._session(tx, tenant, done["session"]), True)
                record = SessionRecord(
                    uuid=session_uuid or str(uuid.uuid4()),
                    tenant=tenant,
                    title=title,
                    meta=metadata or {},
                )
                tx.add(record)
                if idempotency:
                    await self._remember(tx, tenant, idempotency, {"session": record.uuid})
                return Created(record)

        return await self._once(write, tenant, idempotency)

    async def _once(
        self, write: Callable[[], Awaitable[_T]], tenant: str, idempotency: Idempotency | None
    ) -> _T:
        """Run ``write``; when a concurrent request committed the same key first (the unique
        key refused this one), run it again: it then finds that request's answer."""
        try:
            return await write()
        except IntegrityError:
            if idempotency is None:
                raise
            async with self.transaction() as tx:
                if await self._answered(tx, tenant, idempotency) is None:
                    raise
            return await write()

    async def _answered(
        self, tx: AsyncSession, tenant: str, idempotency: Idempotency
    ) -> dict[str, Any] | None:
        """The answer kept under the key (None when the key is new); a key first used for a
        different request is refused."""
        row = await tx.scalar(
            select(IdempotencyRecord).where(
                IdempotencyRecord.tenant == tenant, IdempotencyRecord.key == idempotency.key
            )
        )
        if row is None or row.created_at < self.clock() - self.keys_kept_for:
            return None  # an expired key is a new request (its row goes when it is reused)
        if row.fingerprint != idempotency.fingerprint:
            raise IdempotencyKeyReusedError(
                f"Idempotency-Key {idempotency.key!r} was first used for a different request; "
                "send a new key with a new request (a retry must repeat the request exactly)"
            )
        return row.response

    async def _remember(
        self, tx: AsyncSession, tenant: str, idempotency: Idempotency, answer: dict[str, Any]
    ) -> None:
        """Keep ``answer`` under the key, in the write's own transaction, and forget the
        tenant's keys older than ``keys_kept_for``."""
        now = self.clock()
        await tx.execute(
            delete(IdempotencyRecord).where(
                IdempotencyRecord.tenant == tenant,
                IdempotencyRecord.created_at < now - self.keys_kept_for,
            )
        )
        tx.add(
            IdempotencyRecord(
                tenant=tenant,
                key=idempotency.key,
                fingerprint=idempotency.fingerprint,
                response=answer,
                created_at=now,
            )
        )

    async def list_sessions(
        self, tenant: str, *, limit: int, offset: int
    ) -> tuple[list[SessionRecord], int]:
        """``tenant``'s sessions, newest first, and how many there are in all."""
        async with self.transaction() as tx:
            total = await tx.scalar(
                select(func.count())
                .select_from(SessionRecord)
                .where(SessionRecord.tenant == tenant)
            )
            rows = await tx.scalars(
                select(SessionRecord)
                .where(SessionRecord.tenant == tenant)
                .order_by(SessionRecord.id.desc())
                .limit(limit)
                .offset(offset)
            )
            return list(rows), int(total or 0)

    async def get_session(self, tenant: str, session_uuid: str) -> SessionRecord:
        """The session, or :class:`NotFoundError` (also for another tenant's session)."""
        async with self.transaction() as tx:
            return await self._session(tx, tenant, session_uuid)

    async def delete_session(self, tenant: str, session_uuid: str) -> None:
        """Delete a session with its messages and summaries (usage events are kept)."""
        async with self.transaction() as tx:
            record = await self._session(tx, tenant, session_uuid, lock=True)
            await tx.execute(delete(MessageRecord).where(MessageRecord.session_id == record.id))
            await tx.execute(delete(SummaryRecord).where(SummaryRecord.session_id == record.id))
            await tx.execute(
                update(UsageEvent).where(UsageEvent.session_id == record.id).values(session_id=None)
            )
            await tx.delete(record)

    async def _session(
        self, tx: AsyncSession, tenant: str, session_uuid: str, *, lock: bool = False
    ) -> SessionRecord:
        canonical = _canonical_uuid(session_uuid)
        if canonical is None:
            raise NotFoundError(f"no session {session_uuid[:64]!r}")
        query = select(SessionRecord).where(
            SessionRecord.uuid == canonical, SessionRecord.tenant == tenant
        )
        if lock:
            query = query.with_for_update()
        record = await tx.scalar(query)
        if record is None:
            raise NotFoundError(f"no session {session_uuid!r}")
        return record

    # messages -----------------------------------------------------------------------------

    async def append(
        self,
        tenant: str,
        session_uuid: str,
        messages: Sequence[Message],
        *,
        idempotency: Idempotency | None = None,
    ) -> Appended:
        """Append ``messages`` (checked against the calls still open) and update the gate.

        Exactly once: leading messages whose client ``id`` the session already holds (with
        the same content) are not appended again, and a retry under the same
        ``idempotency`` key gets the first request's answer."""

        async def write() -> Appended:
            async with self.transaction() as tx:
                record = await self._session(tx, tenant, session_uuid, lock=True)
                if idempotency and (done := await self._answered(tx, tenant, idempotency)):
                    return Appended(done["ids"], done["due"], record, done["held"], replayed=True)
                appended = await self._append(tx, record, messages)
                if idempotency:
                    await self._remember(tx, tenant, idempotency, appended.answer())
                return appended

        return await self._once(write, tenant, idempotency)

    async def _append(
        self, tx: AsyncSession, record: SessionRecord, messages: Sequence[Message]
    ) -> Appended:
        held = await self._held_ids(tx, record, messages)
        new = messages[len(held) :]
        if not new:
            return Appended(held, record.due_since is not None, record, len(held))
        open_calls = _open_calls(record.open_tool_calls, new, start=len(held))
        sizes = await off_loop(len(new) >= MANY_MESSAGES, self._measure, new)
        rows = [
            {
                "session_id": record.id,
                "role": m.role,
                "client_id": _client_id(m),
                "payload": _payload(m),
                "chars": size.chars,
                "tokens": size.tokens,
                "created_at": self.clock(),
            }
            for m, size in zip(new, sizes, strict=True)
        ]
        ids = list(
            await tx.scalars(
                insert(MessageRecord).returning(MessageRecord.id, sort_by_parameter_order=True),
                rows,
            )
        )
        added = sum(sizes, Size())
        record.message_count += added.messages
        record.char_count += added.chars
        record.token_count += added.tokens
        record.context_messages += added.messages
        record.context_chars += added.chars
        record.context_tokens += added.tokens
        record.pending_messages += added.messages
        record.last_message_id = ids[-1]
        record.open_tool_calls = open_calls
        record.updated_at = self.clock()
        return Appended([*held, *ids], self._mark_due(record), record, len(held))

    def _measure(self, messages: Sequence[Message]) -> list[Size]:
        return [self.meter.message(m) for m in messages]

    async def _held_ids(
        self, tx: AsyncSession, record: SessionRecord, messages: Sequence[Message]
    ) -> list[int]:
        """Record ids of the leading messages the session already holds, by client id.
        A held message must be one the session holds with the same content, and must come
        before every new one (:class:`ConflictError` otherwise)."""
        client_ids = [_client_id(m) for m in messages]
        given = [c for c in client_ids if c is not None]
        if not given:
            return []
        if len(set(given)) < len(given):
            second = next(i for i, c in enumerate(client_ids) if c in client_ids[:i] and c)
            raise InputError(
                f"id {client_ids[second]!r} is given to two messages of the request; a "
                "message's id must be unique in its session",
                where=f"messages.{second}",
            )
        rows = await tx.execute(
            select(MessageRecord.client_id, MessageRecord.id, MessageRecord.payload).where(
                MessageRecord.session_id == record.id, MessageRecord.client_id.in_(given)
            )
        )
        stored = {client: (row_id, payload) for client, row_id, payload in rows}
        held: list[int] = []
        for i, (message, client) in enumerate(zip(messages, client_ids, strict=True)):
            if client not in stored:
                continue
            row_id, payload = stored[client]
            if payload != _payload(message):
                raise ConflictError(
                    f"messages.{i}: the session already holds a different message with id "
                    f"{client!r}; give a new message a new id"
                )
            if i != len(held):
                raise ConflictError(
                    f"messages.{i}: the session already holds the message with id {client!r}, "
                    "but it follows messages it does not hold; send the held messages first "
                    "or leave them out"
                )
            held.append(row_id)
        return held

    def _mark_due(self, record: SessionRecord) -> bool:
        """Set or clear ``due_since`` from the counters alone; True when due."""
        context = Size(record.context_chars, record.context_tokens, record.context_messages)
        due = self.policy.is_due(context, record.pending_messages)
        if not due:
            record.due_since = None
        elif record.due_since is None:
            record.due_since = self.clock()
        return due

    async def client_history(self, tenant: str, session_uuid: str, first: str) -> History:
        """Where the session's record stands for a client re-sending its conversation: how
        many messages it holds, the client id of the last one, and whether it holds a
        message with the client id ``first``."""
        async with self.transaction() as tx:
            record = await self._session(tx, tenant, session_uuid)
            head = None
            if record.last_message_id is not None:
                head = await tx.scalar(
                    select(MessageRecord.client_id).where(
                        MessageRecord.id == record.last_message_id
                    )
                )
            holds = await tx.scalar(
                select(MessageRecord.id).where(
                    MessageRecord.session_id == record.id, MessageRecord.client_id == first
                )
            )
            return History(record.message_count, head, holds is not None)

    async def list_messages(
        self, tenant: str, session_uuid: str, *, after: int | None, limit: int
    ) -> list[Message]:
        """The raw record in order, ``limit`` messages after id ``after``."""
        async with self.transaction() as tx:
            record = await self._session(tx, tenant, session_uuid)
            query = select(MessageRecord).where(MessageRecord.session_id == record.id)
            if after is not None:
                query = query.where(MessageRecord.id > after)
            rows = await tx.scalars(query.order_by(MessageRecord.id).limit(limit))
            return [_listed(r) for r in rows]

    # context and summaries ----------------------------------------------------------------

    async def load(self, session_id: int) -> Loaded:
        """The un-summarized messages and the active chain, read under a share lock."""
        async with self.transaction() as tx:
            record = await tx.scalar(
                select(SessionRecord)
                .where(SessionRecord.id == session_id)
                .with_for_update(read=True)
            )
            if record is None:
                raise NotFoundError(f"session {session_id} was deleted")
            return await self._load(tx, record)

    async def load_context(self, tenant: str, session_uuid: str) -> tuple[SessionRecord, Loaded]:
        """The session and what its context is built from."""
        async with self.transaction() as tx:
            record = await self._session(tx, tenant, session_uuid)
            return record, await self._load(tx, record)

    async def _load(self, tx: AsyncSession, record: SessionRecord) -> Loaded:
        rows = list(await tx.scalars(self._active_rows(record.id)))
        carried = sorted({int(i) for r in rows for i in r.carried})
        through = record.summarized_through
        query = select(MessageRecord).where(MessageRecord.session_id == record.id)
        if through is not None:
            query = query.where(
                or_(
                    MessageRecord.id > through,
                    MessageRecord.role.in_(INSTRUCTION_ROLES),
                    MessageRecord.id.in_(carried),
                )
            )
        raw = (await tx.execute(query.with_only_columns(*_RAW).order_by(MessageRecord.id))).all()
        body = await off_loop(len(raw) >= MANY_MESSAGES, _decoded, raw)
        chain = Chain(tuple(_row(r) for r in rows))
        return Loaded(body, chain, rows, through, record.pending_messages)

    def record_reader(self, session_id: int) -> RecordReader:
        """A reader of the session's raw record (what its summaries stand for): the
        messages from one id to another, system messages and ``skip`` left out."""

        async def read(first: Ref, last: Ref, skip: Collection[Ref]) -> Sequence[Message]:
            async with self.transaction() as tx:
                rows = await tx.scalars(
                    select(MessageRecord)
                    .where(
                        MessageRecord.session_id == session_id,
                        MessageRecord.id >= int(first),
                        MessageRecord.id <= int(last),
                        MessageRecord.role.not_in(INSTRUCTION_ROLES),
                    )
                    .order_by(MessageRecord.id)
                )
                skipped = {int(s) for s in skip}
                return [_message(m) for m in rows if m.id not in skipped]

        return read

    @staticmethod
    def _active_rows(session_id: int) -> Select[SummaryRecord]:
        return (
            select(SummaryRecord)
            .where(SummaryRecord.session_id == session_id, SummaryRecord.superseded_by.is_(None))
            .order_by(SummaryRecord.first_message_id)
        )

    async def summaries(
        self, tenant: str, session_uuid: str, *, include_superseded: bool = False
    ) -> list[SummaryRecord]:
        """The session's summary chain in order (with the rows updates replaced, if asked)."""
        async with self.transaction() as tx:
            record = await self._session(tx, tenant, session_uuid)
            if not include_superseded:
                return list(await tx.scalars(self._active_rows(record.id)))
            query = select(SummaryRecord).where(SummaryRecord.session_id == record.id)
            return list(await tx.scalars(query.order_by(SummaryRecord.id)))

    # compaction leases --------------------------------------------------------------------

    async def claim_due(self, owner: str, lease: dt.timedelta) -> Claim | None:
        """Lease the session that has been due longest (and is not leased), if any."""
        now = self.clock()
        query = (
            select(SessionRecord)
            .where(
                SessionRecord.due_since.is_not(None),
                or_(SessionRecord.next_attempt_at.is_(None), SessionRecord.next_attempt_at <= now),
                or_(SessionRecord.lease_expires_at.is_(None), SessionRecord.lease_expires_at < now),
            )
            .order_by(SessionRecord.due_since)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        async with self.transaction() as tx:
            record = await tx.scalar(query)
            return None if record is None else _lease(record, owner, now + lease)

    async def claim(self, tenant: str, session_uuid: str, owner: str, lease: dt.timedelta) -> Claim:
        """Lease one session now (a compaction asked for by a request); :class:`BusyError`
        while another lease on it is live."""
        async with self.transaction() as tx:
            record = await self._session(tx, tenant, session_uuid, lock=True)
            if record.leased_at(self.clock()):
                raise BusyError(f"session {session_uuid} is being compacted right now")
            return _lease(record, owner, self.clock() + lease)

    async def renew(self, claim: Claim, lease: dt.timedelta) -> bool:
        """Extend a lease still held; False when it was lost."""
        async with self.transaction() as tx:
            result = await tx.execute(
                update(SessionRecord)
                .where(
                    SessionRecord.id == claim.session_id, SessionRecord.lease_token == claim.token
                )
                .values(lease_expires_at=self.clock() + lease)
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]

    async def release(self, claim: Claim) -> None:
        """Give a lease back unfinished (shutting down): the session stays due for others."""
        async with self.transaction() as tx:
            await tx.execute(
                update(SessionRecord)
                .where(
                    SessionRecord.id == claim.session_id, SessionRecord.lease_token == claim.token
                )
                .values(lease_token=None, lease_owner=None, lease_expires_at=None)
            )

    async def reclaim(self, orphaned: Callable[[str], bool]) -> int:
        """Free the live leases whose owner ``orphaned`` says is gone (a crashed predecessor
        on this machine), so their sessions can be claimed now; how many were freed."""
        now = self.clock()
        async with self.transaction() as tx:
            leased = await tx.execute(
                select(SessionRecord.id, SessionRecord.lease_owner).where(
                    SessionRecord.lease_expires_at >= now, SessionRecord.lease_owner.is_not(None)
                )
            )
            dead = {(id_, owner) for id_, owner in leased if owner and orphaned(owner)}
            if dead:
                await tx.execute(
                    update(SessionRecord)
                    .where(
                        SessionRecord.id.in_([id_ for id_, _ in dead]),
                        SessionRecord.lease_owner.in_({owner for _, owner in dead}),
                    )
                    .values(lease_token=None, lease_owner=None, lease_expires_at=None)
                )
        return len(dead)

    @staticmethod
    async def _positions(tx: AsyncSession, session_id: int, first: int, last: int) -> list[int]:
        """Where messages ``first`` and ``last`` stand in their session, counting from 1."""
        counts = await tx.execute(
            select(
                func.count().filter(MessageRecord.id <= first),
                func.count().filter(MessageRecord.id <= last),
            ).where(MessageRecord.session_id == session_id)
        )
        return [int(n) for n in counts.one()]

    async def _held(self, tx: AsyncSession, claim: Claim, loaded: Loaded) -> SessionRecord:
        record = await tx.scalar(
            select(SessionRecord).where(SessionRecord.id == claim.session_id).with_for_update()
        )
        _check_held(record, claim)
        assert record is not None
        if record.summarized_through != loaded.through:
            raise LeaseLost(f"session {claim.uuid} was compacted by another worker meanwhile")
        return record

    async def commit(
        self, claim: Claim, loaded: Loaded, result: CompactionResult, events: list[UsageEvent]
    ) -> SummaryRecord:
        """Commit a compaction: the new summary row, the rows it supersedes, the new
        summarized-through id, the counters and the usage events, in one transaction."""
        new = result.chain.latest
        assert new is not None, "commit needs a summary"
        replaced = loaded.rows[len(result.chain.rows) - 1 :]  # the rows the new one merges
        report = result.report
        text = new.render()
        size = self.meter.text(text)
        model = next((u.model for u in reversed(report.usage) if u.error is None), None)
        async with self.transaction() as tx:
            record = await self._held(tx, claim, loaded)
            first, last = await self._positions(tx, record.id, int(new.first), int(new.last))
            summary = SummaryRecord(
                session_id=record.id,
                first_message_id=int(new.first),
                last_message_id=int(new.last),
                first_position=first,
                last_position=last,
                text=new.text,
                instructions=list(new.instructions),
                carried=sorted({int(c) for c in new.carried}),
                messages=new.messages,
                source_chars=new.source_chars,
                chars=size.chars,
                tokens=size.tokens,
                strategy=new.strategy,
                model=model if new.strategy == "llm" else None,
            )
            tx.add(summary)
            await tx.flush()
            if replaced:
                await tx.execute(
                    update(SummaryRecord)
                    .where(SummaryRecord.id.in_([r.id for r in replaced]))
                    .values(superseded_by=summary.id)
                )
            delta = report.size_after - report.size_before
            record.summarized_through = int(new.last)
            record.context_messages += delta.messages
            record.context_chars += delta.chars
            record.context_tokens += delta.tokens
            self._release(record, loaded)
            tx.add_all(events)
        return summary

    async def skip(self, claim: Claim, loaded: Loaded, events: list[UsageEvent]) -> None:
        """Record a pass the planner skipped; the session waits for new messages."""
        async with self.transaction() as tx:
            record = await self._held(tx, claim, loaded)
            self._release(record, loaded)
            tx.add_all(events)

    async def fail(
        self,
        claim: Claim,
        loaded: Loaded | None,
        reason: str,
        retry_in: dt.timedelta,
        events: list[UsageEvent],
    ) -> None:
        """Record a failed pass: the session stays due and is retried after ``retry_in``."""
        async with self.transaction() as tx:
            record = await tx.scalar(
                select(SessionRecord).where(SessionRecord.id == claim.session_id).with_for_update()
            )
            _check_held(record, claim)
            assert record is not None
            record.failures += 1
            record.last_error = reason
            record.next_attempt_at = self.clock() + retry_in
            record.lease_token = record.lease_owner = record.lease_expires_at = None
            tx.add_all(events)

    def _release(self, record: SessionRecord, loaded: Loaded) -> None:
        """Drop the lease and reset the retry state; due again only on the counters."""
        record.pending_messages = max(0, record.pending_messages - loaded.pending)
        record.failures = 0
        record.last_error = None
        record.next_attempt_at = None
        record.lease_token = record.lease_owner = record.lease_expires_at = None
        self._mark_due(record)

    # usage and stats ----------------------------------------------------------------------

    async def record_events(self, events: list[UsageEvent]) -> None:
        """Store usage events outside a compaction (the model calls of a pass that lost its
        session). An event of a session deleted meanwhile is kept without the session: its
        tenant still counts the spend."""
        async with self.transaction() as tx:
            ids = {e.session_id for e in events if e.session_id is not None}
            existing = set(
                await tx.scalars(
                    select(SessionRecord.id)
                    .where(SessionRecord.id.in_(ids))
                    .with_for_update(read=True)  # not deleted until these are in
                )
                if ids
                else ()
            )
            for event in events:
                if event.session_id not in existing:
                    event.session_id = None
            tx.add_all(events)

    async def usage_events(self, tenant: str) -> list[UsageEvent]:
        """Every usage event of ``tenant``, oldest first."""
        async with self.transaction() as tx:
            query = select(UsageEvent).where(UsageEvent.tenant == tenant)
            return list(await tx.scalars(query.order_by(UsageEvent.id)))

    async def compaction_history(self, tenant: str, *, limit: int) -> Sequence[Row[Any]]:
        """The tenant's latest committed passes, oldest first; each row has ``at``, ``path``,
        ``session`` (its id; None for a stateless pass or a deleted session), ``title``,
        ``chars_before``, ``chars_after``, ``messages_removed``, ``tokens_saved`` and
        ``tokens_saved_total`` (saved by the tenant's passes up to this one)."""
        passes = (
            select(
                UsageEvent.id,
                UsageEvent.session_id,
                UsageEvent.created_at.label("at"),
                UsageEvent.path,
                UsageEvent.chars_before,
                UsageEvent.chars_after,
                UsageEvent.messages_removed,
                UsageEvent.tokens_saved,
                func.sum(UsageEvent.tokens_saved)
                .over(order_by=UsageEvent.id)
                .label("tokens_saved_total"),
            )
            .where(
                UsageEvent.tenant == tenant,
                UsageEvent.kind == "compaction",
                UsageEvent.path.in_(COMPACTED_PATHS),
            )
            .subquery()
        )
        async with self.transaction() as tx:
            rows = await tx.execute(
                select(passes, SessionRecord.uuid.label("session"), SessionRecord.title)
                .outerjoin(SessionRecord, SessionRecord.id == passes.c.session_id)
                .order_by(passes.c.id.desc())
                .limit(limit)
            )
            return list(reversed(rows.all()))

    async def stats(self, tenant: str) -> dict[str, int | float]:
        """Totals over ``tenant``'s usage events and sessions."""
        compacted = UsageEvent.path.in_(COMPACTED_PATHS)
        call = UsageEvent.kind == "model_call"  # a pass's own event repeats its calls' tokens
        async with self.transaction() as tx:
            events = (
                await tx.execute(
                    select(
                        func.count().filter(UsageEvent.kind == "compaction", compacted),
                        func.coalesce(func.sum(UsageEvent.chars_removed), 0),
                        func.coalesce(func.sum(UsageEvent.tokens_saved), 0),
                        func.count().filter(UsageEvent.kind == "compaction", ~compacted),
                        func.count().filter(UsageEvent.path == "fallback"),
                        func.count().filter(call),
                        func.coalesce(func.sum(UsageEvent.prompt_tokens).filter(call), 0),
                        func.coalesce(func.sum(UsageEvent.completion_tokens).filter(call), 0),
                    ).where(UsageEvent.tenant == tenant)
                )
            ).one()
            sessions = (
                await tx.execute(
                    select(
                        func.count(),
                        func.count(SessionRecord.summarized_through),
                        func.count(SessionRecord.due_since),
                        func.coalesce(func.sum(SessionRecord.message_count), 0),
                        func.coalesce(func.sum(SessionRecord.char_count), 0),
                        func.coalesce(func.sum(SessionRecord.context_chars), 0),
                    ).where(SessionRecord.tenant == tenant)
                )
            ).one()
        return {
            "total_summarizations": events[0],
            "total_chars_compacted": int(events[1]),
            "estimated_tokens_saved": int(events[2]),
            "passes_without_summary": events[3],
            "fallbacks": events[4],
            "model_calls": events[5],
            "prompt_tokens": int(events[6]),
            "completion_tokens": int(events[7]),
            "total_sessions": sessions[0],
            "sessions_compacted": sessions[1],
            "sessions_due": sessions[2],
            "total_messages": int(sessions[3]),
            "total_chars": int(sessions[4]),
            "context_chars": int(sessions[5]),
        }


_INDEX = re.compile(r"message (\d+)")
COMPACTED_PATHS = ("llm", "extractive", "fallback")
"""Usage-event paths of passes that committed a summary."""


class Spender(Protocol):
    """Whom a pass's usage is counted for: a tenant, and its session when there is one."""

    @property
    def tenant(self) -> str: ...

    @property
    def session_id(self) -> int | None: ...


@dataclass(frozen=True)
class Sessionless:
    """A pass made for a tenant outside any stored session (a stateless proxy request)."""

    tenant: str
    session_id: None = None


def usage_events(
    claim: Spender, result: CompactionResult[Any] | None, *, path: str, reason: str | None
) -> list[UsageEvent]:
    """The usage events of one pass: one per model call, then the compaction itself
    (Design A's metadata: ``summarization``, ``messages_removed``, ``chars_removed``)."""
    report = result.report if result is not None else None
    calls = [_model_call(claim, u) for u in (report.usage if report else ())]
    compaction = UsageEvent(
        tenant=claim.tenant,
        session_id=claim.session_id,
        kind="compaction",
        path=path,
        reason=reason,
    )
    removed = chars_removed = 0
    if report is not None:
        removed, chars_removed = report.messages_removed, report.chars_removed
        saved = report.size_before - report.size_after if report.compacted else Size()
        compaction.strategy = report.strategy
        compaction.messages_removed = removed
        compaction.chars_removed = chars_removed
        compaction.tokens_saved = max(0, saved.tokens)
        compaction.chars_before = report.size_before.chars
        compaction.chars_after = report.size_after.chars
        compaction.prompt_tokens = sum(u.prompt_tokens or 0 for u in report.usage)
        compaction.completion_tokens = sum(u.completion_tokens or 0 for u in report.usage)
        compaction.duration_ms = report.elapsed_ms
    compaction.meta = {
        "summarization": True,
        "messages_removed": removed,
        "chars_removed": chars_removed,
        "path": path,
        **({"reason": reason} if reason else {}),
    }
    return [*calls, compaction]


def _model_call(claim: Spender, usage: Usage) -> UsageEvent:
    return UsageEvent(
        tenant=claim.tenant,
        session_id=claim.session_id,
        kind="model_call",
        path="error" if usage.error else "ok",
        reason=usage.error,
        model=usage.model,
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        duration_ms=usage.duration_ms,
        meta={"attempts": usage.attempts},
    )


def _canonical_uuid(text: str) -> str | None:
    """``text`` as sessions are stored (lower case, hyphens), if it is a UUID written that
    way in either case; else None."""
    try:
        canonical = str(uuid.UUID(text))
    except ValueError:
        return None
    return canonical if canonical == text.lower() else None


def _check_held(record: SessionRecord | None, claim: Claim) -> None:
    """:class:`LeaseLost` unless the session still exists under ``claim``'s lease."""
    if record is None:
        raise LeaseLost(f"session {claim.uuid} was deleted during the pass")
    if record.lease_token != claim.token:
        raise LeaseLost(f"the lease on session {claim.uuid} expired and another worker took it")


def _lease(record: SessionRecord, owner: str, expires: dt.datetime) -> Claim:
    record.lease_token = str(uuid.uuid4())
    record.lease_owner = owner
    record.lease_expires_at = expires
    return Claim(record.id, record.uuid, record.tenant, record.lease_token)


def _open_calls(open_ids: list[Any], messages: Sequence[Message], *, start: int = 0) -> list[str]:
    """Check ``messages`` continue a history whose last tool calls ``open_ids`` still wait
    for results; return the calls open after them. Raises :class:`InvalidHistoryError`
    naming the request's message (``messages`` begin at its ``start``)."""
    if open_ids:
        leading = next((i for i, m in enumerate(messages) if m.role != "tool"), len(messages))
        answered = {m.tool_call_id for m in messages[:leading]}
        missing = [i for i in open_ids if i not in answered]
        if missing and leading < len(messages):
            raise InvalidHistoryError(
                f"tool call(s) {', '.join(map(repr, missing))} of an earlier message still "
                "wait for their results; append those first",
                where=f"messages.{leading + start}",
            )
    opening = Message(
        role="assistant", tool_calls=tuple(ToolCall(id=i, name="_") for i in open_ids)
    )
    offset = (1 if open_ids else 0) - start
    history = [opening, *messages] if open_ids else list(messages)
    try:
        validate_history(history)
    except InvalidHistoryError as exc:
        index = int(m.group(1)) - offset if (m := _INDEX.search(exc.where or "")) else 0
        problem = _INDEX.sub(lambda m: f"message {int(m.group(1)) - offset}", exc.message)
        raise InvalidHistoryError(problem, where=f"messages.{max(start, index)}") from exc
    last_call = max((i for i, m in enumerate(history) if m.tool_calls), default=None)
    if last_call is None or any(m.role != "tool" for m in history[last_call + 1 :]):
        return []
    answered = {m.tool_call_id for m in history[last_call + 1 :]}
    return [c.id for c in history[last_call].tool_calls if c.id not in answered]


def _client_id(message: Message) -> str | None:
    """The client's own id of ``message`` as stored (ids are strings or integers)."""
    return None if message.id is None else str(message.id)


def _payload(message: Message) -> dict[str, Any]:
    """The stored OpenAI dict (a client's own ``id`` is kept in its own column)."""
    return to_openai(message.replace(id=None))


def _clean(payload: dict[str, Any]) -> Message:
    """The message of a stored payload (one stored before client ids had their column
    kept its id as ``client_id``: that key is no part of the message)."""
    return from_openai({k: v for k, v in payload.items() if k != "client_id"})


_RAW = (MessageRecord.id, cast(MessageRecord.payload, Text))
"""A message's id and its payload as JSON text: decoded by :func:`_decoded`, off the loop."""


def _decoded(rows: Sequence[Any]) -> list[Message]:
    """Messages from (id, payload JSON text) rows."""
    return [_clean(json.loads(payload)).replace(id=row_id) for row_id, payload in rows]


def _message(record: MessageRecord) -> Message:
    return _clean(record.payload).replace(id=record.id)


def _listed(record: MessageRecord) -> Message:
    """A message of the raw record as listed: with when it was appended (``created_at``) and
    the client's own id as ``client_id``; a context never carries either."""
    message = _message(record)
    client_id = record.client_id or record.payload.get("client_id")
    listed = {"created_at": record.created_at.isoformat()}
    if client_id is not None:
        listed["client_id"] = client_id
    return message.replace(extra={**message.extra, **listed})


def _row(record: SummaryRecord) -> SummaryRow:
    return SummaryRow(
        text=record.text,
        first=record.first_message_id,
        last=record.last_message_id,
        messages=record.messages,
        span=(record.first_position, record.last_position)
        if record.first_position is not None and record.last_position is not None
        else None,
        instructions=tuple(record.instructions),
        carried=tuple(record.carried),
        strategy=record.strategy,
        source_chars=record.source_chars,
    )
