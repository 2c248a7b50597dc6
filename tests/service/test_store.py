"""Store conformance, on SQLite and PostgreSQL: the O(1) gate, exclusive leases, commits
that only land while the lease is held, one summary per range."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import event

from recap_memory.compactor import Compactor
from recap_memory.messages import Message
from recap_memory.store import LeaseLost, Store, migrate, open_engine, usage_events
from recap_memory.testing import ManualClock
from tests.service.conftest import SMALL

LEASE = dt.timedelta(seconds=30)


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    """A store over a freshly migrated database."""
    await migrate(database_url)
    store = Store(open_engine(database_url), SMALL.policy(), clock=ManualClock())
    yield store
    await store.close()


def _turn(n: int) -> list[Message]:
    return [
        Message(role="user", content=f"Question {n}: where is invoice {1000 + n}? " * 6),
        Message(role="assistant", content=f"Answer {n}: invoice {1000 + n} was paid. " * 6),
    ]


async def _due_session(store: Store) -> str:
    record = (await store.create_session("t")).session
    for n in range(8):
        appended = await store.append("t", record.uuid, _turn(n))
    assert appended.due
    return record.uuid


def _statements(store: Store) -> list[str]:
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement.lower())

    event.listen(store.engine.sync_engine, "before_cursor_execute", record)
    return seen


async def test_the_gate_never_reads_the_messages(store: Store) -> None:
    small = (await store.create_session("t")).session
    large = (await store.create_session("t")).session
    await store.append("t", small.uuid, _turn(0))
    for n in range(40):
        await store.append("t", large.uuid, [m for k in range(10) for m in _turn(n * 10 + k)])
    statements = _statements(store)
    await store.append("t", small.uuid, _turn(1))
    on_small = list(statements)
    statements.clear()
    appended = await store.append("t", large.uuid, _turn(999))
    assert len(on_small) == len(statements), "same work for 4 messages as for 800"
    reads = [s for s in statements if s.lstrip().startswith("select")]
    assert all("from messages" not in s and "sum(" not in s and "count(" not in s for s in reads)
    assert appended.session.message_count == 802


async def test_a_lease_is_exclusive_across_stores(store: Store, database_url: str) -> None:
    await _due_session(store)
    other = Store(open_engine(database_url), SMALL.policy())
    try:
        claims = await asyncio.gather(
            store.claim_due("a", LEASE), other.claim_due("b", LEASE), store.claim_due("c", LEASE)
        )
    finally:
        await other.close()
    assert sum(c is not None for c in claims) == 1


async def test_only_the_lease_holder_commits_and_only_once(store: Store) -> None:
    session = await _due_session(store)
    first = await store.claim_due("a", dt.timedelta(seconds=30))
    assert first is not None and await store.claim_due("b", LEASE) is None
    loaded = await store.load(first.session_id)
    result = await Compactor(policy=store.policy).compact(loaded.body, chain=loaded.chain)
    assert result.report.compacted
    assert isinstance(store.clock, ManualClock)
    store.clock.advance(29)
    assert await store.claim_due("b", LEASE) is None, "the lease holds until it expires"
    store.clock.advance(2)  # the lease expires (the worker "died")
    second = await store.claim_due("b", LEASE)
    assert second is not None and second.token != first.token
    with pytest.raises(LeaseLost):
        await store.commit(
            first, loaded, result, usage_events(first, result, path="x", reason=None)
        )
    again = await store.load(second.session_id)
    summary = await store.commit(
        second, again, result, usage_events(second, result, path="extractive", reason=None)
    )
    with pytest.raises(LeaseLost):  # the same range cannot be committed twice
        await store.commit(second, again, result, [])
    rows = await store.summaries("t", session, include_superseded=True)
    assert [r.id for r in rows] == [summary.id]
    record = await store.get_session("t", session)
    assert record.summarized_through == summary.last_message_id and record.lease_token is None
    assert record.message_count == 16, "compaction removes no message from the record"
