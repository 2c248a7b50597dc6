"""Appends racing a compaction lose nothing: every message in the record once, in order;
the context a valid history; summary ranges that never overlap."""

from __future__ import annotations

import asyncio
import itertools

from recap_memory.compactor import Compactor
from recap_memory.messages import from_openai, is_valid_history
from recap_memory.summarizers import ExtractiveSummarizer, FoldRequest
from recap_memory.summarizers.base import Fold
from tests.service.conftest import App, running_app, turn
from tests.service.test_api import settled


class SlowExtractive(ExtractiveSummarizer):
    """The extractive summarizer, slowed down so appends land while it runs."""

    async def fold(self, request: FoldRequest) -> Fold:
        await asyncio.sleep(0.2)
        return await super().fold(request)


async def _all_messages(app: App, session: str) -> list[dict[str, object]]:
    page = await app.client.get(f"/sessions/{session}/messages", params={"limit": 1000})
    return list(page.json()["items"])


async def test_concurrent_appends_during_compactions_lose_nothing(database_url: str) -> None:
    compactor = Compactor(SlowExtractive(), fallback=None)
    writers, turns = 6, 12

    async def writer(app: App, session: str, w: int) -> list[int]:
        ids = []
        for n in range(turns):
            ids += await app.append(session, *turn(w * 100 + n))
            await asyncio.sleep(0.1)  # keep appending for over a second: several passes run
        return ids

    async for app in running_app(database_url, compactor=compactor):
        session = await app.session()
        acknowledged = await asyncio.gather(*(writer(app, session, w) for w in range(writers)))
        await settled(app, session)

        record = await _all_messages(app, session)
        record_ids = [int(str(m["id"])) for m in record]
        everything = sorted(i for ids in acknowledged for i in ids)
        assert record_ids == everything, "every acknowledged message is there exactly once"
        for w, ids in enumerate(acknowledged):  # each writer's messages, in its order
            mine = set(ids)
            contents = [m["content"] for m in record if m["id"] in mine]
            assert contents == [m["content"] for n in range(turns) for m in turn(w * 100 + n)]

        events = await app.state.store.usage_events("default")
        committed = [e for e in events if e.kind == "compaction" and e.path == "extractive"]
        assert len(committed) >= 2, "compactions ran while the writers appended"

        context = (await app.client.get(f"/sessions/{session}/context")).json()
        assert is_valid_history([from_openai(m) for m in context["messages"]])
        rows = (
            await app.client.get(
                f"/sessions/{session}/summaries", params={"include_superseded": True}
            )
        ).json()
        active = [r for r in rows if r["superseded_by"] is None]
        spans = [(r["first_message_id"], r["last_message_id"]) for r in active]
        assert all(a[1] < b[0] for a, b in itertools.pairwise(spans)), spans
        assert len({r["last_message_id"] for r in rows}) == len(rows)
        state = (await app.client.get(f"/sessions/{session}")).json()
        assert state["context_chars"] == context["chars"]
        assert spans[-1][1] == state["summarized_through"]
