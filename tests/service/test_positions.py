"""Summaries are numbered by position in their session (1…n), not by database id: the header
the model reads, the API's rows, and rows written before the positions were kept (migration
0003 numbers them)."""

from __future__ import annotations

import asyncio
import re

from alembic import command
from sqlalchemy import text

from recap_memory.store.engine import _alembic_config
from tests.service.conftest import App, running_app
from tests.service.test_api import drive, settled


async def _compacted_after_another_session(app: App) -> tuple[str, list[int]]:
    """A session whose message ids do not start at 1 (another session wrote first), compacted
    at least twice; the session and its message ids."""
    other = await app.session(title="first")
    await drive(app, other, 3)
    session = await app.session(title="second")
    ids = await drive(app, session, 8)
    await settled(app, session)
    ids += await drive(app, session, 8, start=8)
    await settled(app, session)
    return session, ids


async def test_headers_and_rows_count_from_the_sessions_first_message(database_url: str) -> None:
    async for app in running_app(database_url):
        session, ids = await _compacted_after_another_session(app)
        assert ids[0] > 1, "the session's ids should not coincide with positions"
        rows = (await app.client.get(f"/sessions/{session}/summaries")).json()
        assert rows, "a summary should have been written"
        for row in rows:
            assert row["first_position"] == ids.index(row["first_message_id"]) + 1
            assert row["last_position"] == ids.index(row["last_message_id"]) + 1
        context = (await app.client.get(f"/sessions/{session}/context")).json()
        summary = next(m for m in context["messages"] if "[recap summary" in (m["content"] or ""))
        covered = re.findall(r"\[recap summary of messages (\d+)–(\d+)", summary["content"])
        assert covered, summary["content"][:200]
        assert covered[0][0] == "1"
        assert [int(n) for n in covered[-1]][1] == rows[-1]["last_position"]


async def test_the_migration_numbers_rows_written_before_it(database_url: str) -> None:
    async for app in running_app(database_url):
        session, _ = await _compacted_after_another_session(app)
        before = (await app.client.get(f"/sessions/{session}/summaries")).json()
    config = _alembic_config(database_url)
    await asyncio.to_thread(command.downgrade, config, "0002")
    await asyncio.to_thread(command.upgrade, config, "head")
    async for app in running_app(database_url):
        after = (await app.client.get(f"/sessions/{session}/summaries")).json()
        async with app.state.store.engine.connect() as connection:
            head = await connection.scalar(text("SELECT version_num FROM alembic_version"))
    assert head == "0003"
    assert [(r["first_position"], r["last_position"]) for r in after] == [
        (r["first_position"], r["last_position"]) for r in before
    ]
    assert all(r["first_position"] is not None for r in after)
