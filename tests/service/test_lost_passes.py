"""A pass that loses its session — its lease taken over by another worker, or the session
deleted under it — announces no failure and still accounts for the model calls it made."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import Sequence

from recap_memory.compactor import Compactor
from recap_memory.llm import FakeModel
from recap_memory.llm.base import ChatTurn
from recap_memory.service.compaction import Backoff, CompactionRunner
from recap_memory.service.events import Event
from recap_memory.summarizers import LLMSummarizer
from recap_memory.testing import ManualClock
from tests.service.conftest import App, running_app, turn

SUMMARY = "**Investigating:** invoices.\n**Key findings:** - ticket 1-0 concerns invoice 1007."


class GatedModel(FakeModel):
    """A fake model whose first call waits until :attr:`gate` opens."""

    def __init__(self) -> None:
        super().__init__(default=SUMMARY)
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()

    async def execute(self, messages: Sequence[ChatTurn], options):  # type: ignore[no-untyped-def]
        if len(self.calls) == 0:
            self.entered.set()
            await self.gate.wait()
        return await super().execute(messages, options)


def compactor(model: FakeModel) -> Compactor:
    return Compactor(LLMSummarizer(model, rejected_retries=0), fallback=None)


async def _due_session(app: App) -> str:
    session = await app.session()
    for n in range(12):
        await app.append(session, *turn(n))
    return session


async def test_a_pass_whose_lease_was_taken_over_announces_no_failure(
    database_url: str,
) -> None:
    """Finding 9: A claims, its lease expires, B claims and finishes, A's commit finds the
    lease lost: subscribers see B's ``finished`` and A's ``superseded``, never ``failed``."""
    slow, fast = GatedModel(), FakeModel(default=SUMMARY)
    clock = ManualClock()
    async for app in running_app(
        database_url,
        compactor=compactor(slow),
        embedded_worker=False,
        clock=clock,
        lease_s=60.0,
    ):
        session = await _due_session(app)
        state = app.state
        other = CompactionRunner(
            state.store,
            compactor(fast).with_policy(state.runner.compactor.policy),
            state.bus,
            state.metrics,
            lease=dt.timedelta(seconds=60),
            backoff=Backoff(0.2, 1.0),
            owner="worker-b",
        )
        seen: list[Event] = []
        async with state.bus.subscribe(session) as queue:
            first = asyncio.create_task(state.runner.run_due())
            await asyncio.wait_for(slow.entered.wait(), 10)
            clock.advance(61)  # A's lease runs out while its model call hangs
            second = await other.run_due()
            assert second is not None and second.path == "llm", second
            slow.gate.set()
            lost = await first
            assert lost is not None and lost.path == "lost", lost
            with contextlib.suppress(TimeoutError):
                while True:  # every event already published
                    seen.append(await asyncio.wait_for(queue.get(), 0.2))
        names = [e.name for e in seen]
        assert "summarization.failed" not in names, names
        assert names.count("summarization.finished") == 1, names
        assert names[-1] == "summarization.superseded", names
        failed = state.metrics.compactions.labels("failed")._value.get()
        assert failed == 0
        body = (await app.client.get(f"/sessions/{session}")).json()
        assert body["failures"] == 0 and body["last_error"] is None, body
        calls = [e for e in await state.store.usage_events("default") if e.kind == "model_call"]
        assert len(calls) == 2, "A's model call is accounted for too"


async def test_a_session_deleted_mid_pass_keeps_the_passes_spend(database_url: str) -> None:
    """Finding 10: the model calls of a pass whose session was deleted under it are stored
    (no session, the tenant kept) and counted by ``/stats``."""
    model = GatedModel()
    async for app in running_app(database_url, compactor=compactor(model), embedded_worker=False):
        session = await _due_session(app)
        running = asyncio.create_task(app.state.runner.run_due())
        await asyncio.wait_for(model.entered.wait(), 10)
        assert (await app.client.delete(f"/sessions/{session}")).status_code == 204
        model.gate.set()
        outcome = await running
        assert outcome is not None and outcome.path == "lost", outcome
        calls = [e for e in await app.state.store.usage_events("default") if e.kind == "model_call"]
        assert len(calls) == 1, calls
        assert calls[0].session_id is None and calls[0].tenant == "default"
        assert calls[0].prompt_tokens == model.calls[0].prompt_tokens > 0
        stats = (await app.client.get("/stats")).json()["summary"]
        assert stats["model_calls"] == 1
        assert stats["prompt_tokens"] == model.calls[0].prompt_tokens
