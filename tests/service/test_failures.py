"""Model failures: the fallback compacts, or the session stays due and is retried later
with a backoff — with a usage event and a ``summarization.failed`` event saying why."""

from __future__ import annotations

import asyncio

import pytest

from recap_memory.compactor import Compactor
from recap_memory.errors import BackendError
from recap_memory.llm import FakeModel
from recap_memory.service.events import Event
from recap_memory.summarizers import ExtractiveSummarizer, LLMSummarizer
from recap_memory.testing import ManualClock
from tests.service.conftest import App, running_app, turn
from tests.service.test_api import drive, settled

SUMMARY = "**Investigating:** invoices.\n**Key findings:** - ticket 1-0 concerns invoice 1007."


async def _events_until(app: App, session: str, last: str, timeout: float = 10.0) -> list[Event]:
    """Events of ``session`` up to the first one named ``last``."""
    seen: list[Event] = []
    async with app.state.bus.subscribe(session) as queue:
        async with asyncio.timeout(timeout):
            while not seen or seen[-1].name != last:
                seen.append(await queue.get())
    return seen


async def test_a_failing_model_falls_back_to_extractive(database_url: str) -> None:
    model = FakeModel(default=BackendError("model server down", kind="connection"))
    compactor = Compactor(LLMSummarizer(model), fallback=ExtractiveSummarizer())
    async for app in running_app(database_url, compactor=compactor):
        session = await app.session()
        await drive(app, session, 12)
        await settled(app, session)
        rows = (await app.client.get(f"/sessions/{session}/summaries")).json()
        assert rows and rows[-1]["strategy"] == "extractive"
        events = await app.state.store.usage_events("default")
        calls = [e for e in events if e.kind == "model_call"]
        compactions = [e for e in events if e.kind == "compaction"]
        assert calls and all(e.path == "error" and "down" in (e.reason or "") for e in calls)
        assert compactions[0].path == "fallback" and "down" in (compactions[0].reason or "")
        stats = (await app.client.get("/stats")).json()["summary"]
        assert stats["fallbacks"] == len(compactions) and stats["model_calls"] == len(calls)


async def test_without_fallback_a_failure_is_retried_later_not_in_a_loop(
    database_url: str,
) -> None:
    model = FakeModel([BackendError("rate limited", kind="rate_limit")] * 2, default=SUMMARY)
    compactor = Compactor(LLMSummarizer(model, rejected_retries=0), fallback=None)
    clock = ManualClock()
    async for app in running_app(
        database_url, compactor=compactor, retry_base_s=1.0, embedded_worker=False, clock=clock
    ):
        session = await app.session()
        for n in range(12):
            await app.append(session, *turn(n))
        waiting = asyncio.create_task(_events_until(app, session, "summarization.failed"))
        await asyncio.sleep(0)
        assert await app.state.runner.run_due() is not None
        events = await waiting
        assert [e.name for e in events] == ["summarization.started", "summarization.failed"]
        assert "rate limited" in events[-1].data["reason"] and events[-1].data["retry_in_s"] >= 1
        state = (await app.client.get(f"/sessions/{session}")).json()
        assert state["due"] and state["failures"] == 1 and "rate limited" in state["last_error"]
        assert state["summarized_through"] is None
        # the backoff holds the session back: no hot loop
        assert await app.state.runner.run_due() is None
        calls = len(model.calls)
        clock.advance(0.9)
        assert await app.state.runner.run_due() is None  # not before the backoff passed
        clock.advance(0.2)
        assert await app.state.runner.run_due() is not None  # retried once the backoff passed
        assert len(model.calls) == calls + 1
        clock.advance(1.9)  # the second failure doubled the wait
        assert await app.state.runner.run_due() is None
        clock.advance(0.2)
        outcome = await app.state.runner.run_due()
        assert outcome is not None and outcome.path == "llm"
        state = (await app.client.get(f"/sessions/{session}")).json()
        assert not state["due"] and state["failures"] == 0 and state["last_error"] is None
        events_ = await app.state.store.usage_events("default")
        paths = [e.path for e in events_ if e.kind == "compaction"]
        assert paths == ["failed", "failed", "llm"]
        rows = (await app.client.get(f"/sessions/{session}/summaries")).json()
        assert len(rows) == 1 and rows[0]["content"].startswith("**Investigating:**")
        assert rows[0]["model"] == "fake"


async def test_a_session_deleted_during_its_pass_is_dropped_quietly(database_url: str) -> None:
    deleted = asyncio.Event()

    class DeletingSummarizer(ExtractiveSummarizer):
        async def fold(self, request):  # type: ignore[no-untyped-def]
            await deleted.wait()
            return await super().fold(request)

    compactor = Compactor(DeletingSummarizer(), fallback=None)
    async for app in running_app(database_url, compactor=compactor, embedded_worker=False):
        session = await app.session()
        await drive(app, session, 12)
        running = asyncio.create_task(app.state.runner.run_due())
        await asyncio.sleep(0.2)
        assert (await app.client.delete(f"/sessions/{session}")).status_code == 204
        deleted.set()
        outcome = await running
        assert outcome is not None and outcome.path == "lost"
        assert await app.state.runner.run_due() is None


async def test_stats_count_each_model_calls_tokens_once(database_url: str) -> None:
    """A pass's usage event repeats its calls' tokens; the totals count the calls only."""
    model = FakeModel(default=SUMMARY)
    async for app in running_app(database_url, compactor=Compactor(LLMSummarizer(model))):
        session = await app.session()
        await drive(app, session, 12)
        await settled(app, session)
        events = await app.state.store.usage_events("default")
        calls = [e for e in events if e.kind == "model_call"]
        stats = (await app.client.get("/stats")).json()["summary"]
        assert calls and stats["prompt_tokens"] == sum(e.prompt_tokens for e in calls) > 0
        assert stats["completion_tokens"] == sum(e.completion_tokens for e in calls)


@pytest.mark.parametrize(
    "answer",
    [
        "I’m sorry, I cannot summarize this conversation.",
        "Unfortunately, I cannot summarize this conversation.",
        "<think>The user wants a summary; let me list the invoices",
        "**Investigating:** invoices.<｜end▁of▁sentence｜>",
    ],
)
async def test_a_refusal_is_never_stored_as_the_summary(database_url: str, answer: str) -> None:
    """Issue 18's finding: with no fallback, a model that refuses leaves the session
    un-summarized and says so (``summarization.failed``), never stores the refusal."""
    model = FakeModel(default=answer)
    compactor = Compactor(LLMSummarizer(model, rejected_retries=0), fallback=None)
    async for app in running_app(database_url, compactor=compactor, embedded_worker=False):
        session = await app.session()
        for n in range(12):
            await app.append(session, *turn(n))
        waiting = asyncio.create_task(_events_until(app, session, "summarization.failed"))
        await asyncio.sleep(0)
        await app.state.runner.run_due()
        events = await waiting
        assert "summarization.finished" not in [e.name for e in events]
        assert "rejected" in events[-1].data["reason"]
        assert (await app.client.get(f"/sessions/{session}/summaries")).json() == []
        context = (await app.client.get(f"/sessions/{session}/context")).json()
        assert not any(answer[:20] in str(m["content"]) for m in context["messages"])
        state = (await app.client.get(f"/sessions/{session}")).json()
        assert state["summarized_through"] is None and state["failures"] == 1
