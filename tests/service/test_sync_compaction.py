"""``?compact=sync`` within its bounds: a hanging model holds a request no longer than
``RECAP_SYNC_WAIT_S``, and a session backing off after a failure is not run again."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

from recap_memory.compactor import Compactor
from recap_memory.errors import BackendError
from recap_memory.llm import FakeModel
from recap_memory.summarizers import LLMSummarizer
from tests.service.conftest import App, running_app, turn
from tests.service.test_lost_passes import GatedModel, compactor


async def _due_session(app: App) -> str:
    session = await app.session()
    for n in range(12):
        await app.append(session, *turn(n))
    return session


async def _sync_context(app: App, session: str) -> tuple[float, dict[str, object]]:
    started = time.monotonic()
    async with asyncio.timeout(10):
        response = await app.client.get(f"/sessions/{session}/context", params={"compact": "sync"})
    assert response.status_code == 200, response.text
    return time.monotonic() - started, dict(response.json())


async def test_a_hanging_pass_holds_the_request_no_longer_than_the_sync_wait(
    database_url: str,
) -> None:
    model = GatedModel()
    async for app in running_app(
        database_url, compactor=compactor(model), embedded_worker=False, sync_wait_s=0.5
    ):
        session = await _due_session(app)
        took, body = await _sync_context(app, session)
        assert took < 3.0, f"the request waited {took:.1f} s for a hanging model"
        assert body["due"] and body["summarized_through"] is None, body
        state = (await app.client.get(f"/sessions/{session}")).json()
        assert state["compacting"], "the pass goes on in the background, under its lease"
        model.gate.set()  # the model answers: the background pass commits
        async with asyncio.timeout(10):
            while (await app.client.get(f"/sessions/{session}")).json()["due"]:
                await asyncio.sleep(0.05)
        assert len(model.calls) == 1
        rows = (await app.client.get(f"/sessions/{session}/summaries")).json()
        assert len(rows) == 1 and rows[0]["strategy"] == "llm"


async def test_a_session_backing_off_is_not_run_again_by_a_sync_context(
    database_url: str,
) -> None:
    model = FakeModel(default=BackendError("model server down", kind="connection"))
    failing = Compactor(LLMSummarizer(model, rejected_retries=0), fallback=None)
    async for app in running_app(
        database_url, compactor=failing, embedded_worker=False, retry_base_s=60.0
    ):
        session = await _due_session(app)
        _, first = await _sync_context(app, session)  # runs the pass: it fails
        assert len(model.calls) == 1 and first["due"], first
        took, again = await _sync_context(app, session)
        assert len(model.calls) == 1, "the failing model was called again within its backoff"
        assert took < 1.0, took
        retry_at = first.get("compaction_retry_at")
        assert isinstance(retry_at, str), first
        assert dt.datetime.fromisoformat(retry_at) > dt.datetime.now(dt.UTC)
        assert again["compaction_retry_at"] == retry_at, again
        background = await app.client.get(f"/sessions/{session}/context")
        assert background.json()["compaction_retry_at"] == retry_at
