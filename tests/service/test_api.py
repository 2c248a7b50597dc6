"""The HTTP API on SQLite and PostgreSQL: sessions, the record, context, summaries, stats."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from recap_memory.messages import from_openai, is_valid_history
from tests.service.conftest import SMALL, App, turn


async def settled(app: App, session: str, timeout: float = 20.0) -> dict[str, Any]:
    """The session once no compaction is due or running (the background worker's work)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        body = (await app.client.get(f"/sessions/{session}")).json()
        if not body["due"] and not body["compacting"]:
            return dict(body)
        assert asyncio.get_running_loop().time() < deadline, f"still due: {body}"
        await asyncio.sleep(0.05)


async def drive(app: App, session: str, turns: int, start: int = 0) -> list[int]:
    """Append ``turns`` exchanges; all the ids given."""
    ids: list[int] = []
    for n in range(start, start + turns):
        ids += await app.append(session, *turn(n))
    return ids


async def test_sessions_are_created_listed_paginated_and_deleted(service: App) -> None:
    first = await service.session(title="first", metadata={"user": "ada"})
    second = await service.session()
    page = (await service.client.get("/sessions", params={"limit": 1})).json()
    assert page["total"] == 2 and [s["id"] for s in page["items"]] == [second]
    rest = (await service.client.get("/sessions", params={"limit": 1, "offset": 1})).json()
    assert [s["id"] for s in rest["items"]] == [first]
    shown = (await service.client.get(f"/sessions/{first}")).json()
    assert shown["title"] == "first" and shown["metadata"] == {"user": "ada"}
    assert (await service.client.delete(f"/sessions/{first}")).status_code == 204
    missing = await service.client.get(f"/sessions/{first}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert (await service.client.get("/sessions")).json()["total"] == 1


async def test_a_session_id_is_found_in_upper_case_too(service: App) -> None:
    session = await service.session(title="case")
    upper = session.upper()
    assert upper != session
    got = await service.client.get(f"/sessions/{upper}")
    assert got.status_code == 200 and got.json()["id"] == session
    appended = await service.client.post(f"/sessions/{upper}/messages", json={"messages": turn(1)})
    assert appended.status_code == 201, appended.text
    assert len((await service.client.get(f"/sessions/{upper}/messages")).json()["items"]) == 2
    context = await service.client.get(f"/sessions/{upper}/context")
    assert context.status_code == 200 and len(context.json()["messages"]) == 2
    assert (await service.client.delete(f"/sessions/{upper}")).status_code == 204
    assert (await service.client.get(f"/sessions/{session}")).status_code == 404


async def test_the_record_keeps_every_message_in_order_across_compactions(service: App) -> None:
    session = await service.session()
    ids = await drive(service, session, 12)
    assert ids == sorted(ids) and len(set(ids)) == 24
    await settled(service, session)
    summaries = (await service.client.get(f"/sessions/{session}/summaries")).json()
    assert summaries, "a session past its threshold gets a summary"
    listed: list[dict[str, Any]] = []
    after = None
    while True:
        params = {"limit": 5, **({"after": after} if after is not None else {})}
        page = (await service.client.get(f"/sessions/{session}/messages", params=params)).json()
        listed += page["items"]
        if page["next_after"] is None:
            break
        after = page["next_after"]
    assert [m["id"] for m in listed] == ids
    sent = [m for n in range(12) for m in turn(n)]
    assert [m["content"] for m in listed] == [m["content"] for m in sent]


async def test_context_is_system_summary_then_tail_and_matches_the_counters(
    service: App,
) -> None:
    session = await service.session()
    await service.append(session, {"role": "system", "content": "You are a billing agent."})
    await drive(service, session, 12)
    record = await settled(service, session)
    context = (await service.client.get(f"/sessions/{session}/context")).json()
    messages = context["messages"]
    assert messages[0] == {"role": "system", "content": "You are a billing agent."}
    listed = (await service.client.get(f"/sessions/{session}/messages")).json()["items"]
    assert all("created_at" in m for m in listed)  # the record's listing says when
    assert not any({"id", "pinned", "created_at", "client_id"} & m.keys() for m in messages), (
        "ready for a provider"
    )
    assert messages[1]["role"] == "user"
    assert messages[1]["content"].startswith("[recap summary of messages ")
    assert context["ids"][0] == 1 and context["ids"][1] is None  # the summary has no id
    tail_ids = context["ids"][2:]
    assert tail_ids and min(tail_ids) > context["summarized_through"]
    assert is_valid_history([from_openai(m) for m in messages])
    assert context["chars"] < record["char_count"]
    # the O(1) counters on the session row equal the context measured message by message
    assert (record["context_chars"], record["context_tokens"]) == (
        context["chars"],
        context["tokens"],
    )


async def test_summaries_say_which_messages_they_cover_without_overlap(service: App) -> None:
    session = await service.session()
    for batch in range(4):
        await drive(service, session, 6, start=batch * 6)
        await settled(service, session)
    rows = (await service.client.get(f"/sessions/{session}/summaries")).json()
    assert rows
    for row in rows:
        first, last = map(int, row["episode_range"].split("-"))
        assert (first, last) == (row["first_message_id"], row["last_message_id"])
        assert row["content"] and row["strategy"] == "extractive" and row["chars"] > 0
    ranges = [(r["first_message_id"], r["last_message_id"]) for r in rows]
    assert all(a[1] < b[0] for a, b in itertools.pairwise(ranges)), ranges
    record = (await service.client.get(f"/sessions/{session}")).json()
    assert ranges[-1][1] == record["summarized_through"]
    everything = (
        await service.client.get(
            f"/sessions/{session}/summaries", params={"include_superseded": True}
        )
    ).json()
    superseded = [r for r in everything if r["superseded_by"] is not None]
    assert len(everything) == len(rows) + len(superseded)
    # one summary per due range: no two rows end at the same message
    assert len({r["last_message_id"] for r in everything}) == len(everything)


async def test_stats_totals_equal_the_usage_events(service: App) -> None:
    sessions = [await service.session() for _ in range(2)]
    for session in sessions:
        await drive(service, session, 10)
        await settled(service, session)
    await service.session()  # one never compacted
    stats = (await service.client.get("/stats")).json()["summary"]
    events = await service.state.store.usage_events("default")
    compactions = [e for e in events if e.kind == "compaction"]
    done = [e for e in compactions if e.path in ("llm", "extractive", "fallback")]
    assert stats["total_summarizations"] == len(done) > 0
    assert stats["total_chars_compacted"] == sum(e.chars_removed for e in compactions) > 0
    assert stats["total_sessions"] == 3 and stats["sessions_compacted"] == 2
    assert all(e.meta["summarization"] is True for e in compactions)
    assert all(e.meta["messages_removed"] == e.messages_removed for e in compactions)
    rows = 0
    for session in sessions:
        rows += len(
            (
                await service.client.get(
                    f"/sessions/{session}/summaries", params={"include_superseded": True}
                )
            ).json()
        )
    assert rows == len(done), "every committed summary has exactly one usage event"


async def test_episode_stats_come_from_the_counters(service: App) -> None:
    session = await service.session()
    ids = await drive(service, session, 3)
    stats = (await service.client.get(f"/sessions/{session}/episode-stats")).json()
    listed = (await service.client.get(f"/sessions/{session}/messages")).json()["items"]
    meter = service.state.store.meter
    assert stats["count"] == 6 and stats["max_id"] == ids[-1]
    assert stats["token_sum"] == sum(meter.message(from_openai(m)).tokens for m in listed)
    assert stats["summarized_through"] is None


async def test_compact_now_folds_a_session_under_its_threshold(service: App) -> None:
    session = await service.session()
    await drive(service, session, 3)
    before = (await service.client.get(f"/sessions/{session}")).json()
    assert not before["due"]
    result = (await service.client.post(f"/sessions/{session}/compact")).json()
    assert result["path"] == "extractive", result
    assert result["summary"]["first_message_id"] == 1
    after = (await service.client.get(f"/sessions/{session}")).json()
    assert after["summarized_through"] == result["summary"]["last_message_id"]
    assert after["context_chars"] < before["context_chars"]


async def test_sync_context_compacts_a_due_session_before_answering(database_url: str) -> None:
    from tests.service.conftest import running_app

    async for app in running_app(database_url, embedded_worker=False):
        session = await app.session()
        await drive(app, session, 12)
        assert (await app.client.get(f"/sessions/{session}")).json()["due"]
        lazy = (await app.client.get(f"/sessions/{session}/context")).json()
        assert lazy["summarized_through"] is None and lazy["due"]
        eager = (
            await app.client.get(f"/sessions/{session}/context", params={"compact": "sync"})
        ).json()
        assert eager["summarized_through"] is not None and not eager["due"]
        assert eager["chars"] < lazy["chars"]


async def test_metrics_and_health(service: App) -> None:
    session = await service.session()
    await drive(service, session, 2)
    health = await service.client.get("/healthz")
    assert health.json() == {"status": "ok"}
    metrics = (await service.client.get("/metrics")).text
    assert "recap_messages_appended_total 4.0" in metrics
    assert 'recap_http_request_seconds_count{method="POST"' in metrics
    assert "text/plain" in (await service.client.get("/metrics")).headers["content-type"]


async def test_openapi_docs_are_served(service: App) -> None:
    schema = (await service.client.get("/openapi.json")).json()
    assert "/sessions/{session_id}/context" in schema["paths"]
    assert (await service.client.get("/docs")).status_code == 200


async def test_a_compacted_session_is_not_due_again_at_the_next_turn(service: App) -> None:
    session = await service.session()
    await drive(service, session, 12)
    await settled(service, session)
    await service.client.post(f"/sessions/{session}/compact")
    for n in range(12):  # a long session: the cumulative summary stays within its room
        await service.client.post(f"/sessions/{session}/messages", json={"messages": turn(n)})
    await settled(service, session)
    await service.client.post(f"/sessions/{session}/compact")  # fold all but the last turn
    rows = (await service.client.get(f"/sessions/{session}/summaries")).json()
    room = SMALL.threshold_chars - SMALL.keep_chars
    assert len(rows) == 1 and rows[0]["chars"] <= room * 2 // 3 + 100  # its share, a header
    ids = await service.append(session, *turn(99, size=150))  # a third of the room is left
    state = (await service.client.get(f"/sessions/{session}")).json()
    assert not state["due"] and state["context_chars"] < 2_000, state["context_chars"]
    assert state["summarized_through"] < ids[0]
