"""Exactly-once writes: an Idempotency-Key or message ids make every retry safe, and a
write whose outcome the server cannot know is answered as such."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from recap_memory.store import migrate
from tests.service.commit_cutter import CommitCutter
from tests.service.conftest import App, postgres_database, running_app, turn

pytestmark = pytest.mark.asyncio


async def _count(app: App, session: str) -> int:
    response = await app.client.get(f"/sessions/{session}")
    return int(response.json()["message_count"])


async def _append(app: App, session: str, messages: list[dict[str, Any]], key: str | None = None):
    headers = {"Idempotency-Key": key} if key else {}
    return await app.client.post(
        f"/sessions/{session}/messages", json={"messages": messages}, headers=headers
    )


async def test_a_retry_with_the_same_key_writes_nothing_more(service: App) -> None:
    session = await service.session()
    first = await _append(service, session, turn(1), key="k-1")
    again = await _append(service, session, turn(1), key="k-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert await _count(service, session) == 2


async def test_a_key_reused_for_another_request_is_refused(service: App) -> None:
    session = await service.session()
    await _append(service, session, turn(1), key="k-1")
    other = await _append(service, session, turn(2), key="k-1")
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert await _count(service, session) == 2


async def test_an_expired_key_is_a_new_request(database_url: str) -> None:
    async for app in running_app(database_url, idempotency_ttl_s=0.5):
        session = await app.session()
        await _append(app, session, turn(1), key="k-1")
        await asyncio.sleep(0.6)
        later = await _append(app, session, turn(1), key="k-1")
        assert later.status_code == 201 and "Idempotent-Replayed" not in later.headers
        assert await _count(app, session) == 4


async def test_a_key_belongs_to_its_tenant(database_url: str) -> None:
    async for app in running_app(database_url, api_keys="ka:alpha,kb:beta"):
        made = []
        for key in ("ka", "kb"):
            auth = {"Authorization": f"Bearer {key}", "Idempotency-Key": "same"}
            made.append(await app.client.post("/sessions", json={}, headers=auth))
        assert [r.status_code for r in made] == [201, 201]
        assert made[0].json()["id"] != made[1].json()["id"]
        assert "Idempotent-Replayed" not in made[1].headers


async def test_creating_a_session_twice_with_one_key_makes_one(service: App) -> None:
    made = [
        await service.client.post(
            "/sessions", json={"title": "t"}, headers={"Idempotency-Key": "s"}
        )
        for _ in range(2)
    ]
    assert [r.status_code for r in made] == [201, 201]
    assert made[0].json()["id"] == made[1].json()["id"]
    assert made[1].headers["Idempotent-Replayed"] == "true"
    listed = await service.client.get("/sessions")
    assert listed.json()["total"] == 1


async def test_concurrent_requests_with_one_key_write_once(service: App) -> None:
    session = await service.session()
    answers = await asyncio.gather(
        *(_append(service, session, turn(1), key="same") for _ in range(6))
    )
    assert {r.status_code for r in answers} == {201}
    assert len({tuple(r.json()["ids"]) for r in answers}) == 1
    assert await _count(service, session) == 2


async def test_messages_the_session_holds_by_id_are_not_appended_again(service: App) -> None:
    session = await service.session()
    history = [{**m, "id": f"m{i}"} for i, m in enumerate(turn(1) + turn(2))]
    first = await _append(service, session, history[:2])
    whole = await _append(service, session, history)  # a client re-sending its history
    assert whole.status_code == 201
    assert whole.json()["held"] == 2
    assert whole.json()["ids"][:2] == first.json()["ids"]
    assert await _count(service, session) == 4
    listed = (await service.client.get(f"/sessions/{session}/messages")).json()["items"]
    assert [m["client_id"] for m in listed] == ["m0", "m1", "m2", "m3"]


async def test_an_id_reused_for_other_content_or_out_of_order_is_a_conflict(service: App) -> None:
    session = await service.session()
    history = [{**m, "id": f"m{i}"} for i, m in enumerate(turn(1))]
    await _append(service, session, history)
    changed = await _append(service, session, [{**history[0], "content": "something else"}])
    assert changed.status_code == 409
    assert "different message with id 'm0'" in changed.json()["error"]["message"]
    late = await _append(
        service, session, [{"role": "user", "content": "new", "id": "n"}, history[1]]
    )
    assert late.status_code == 409 and "follows messages it does not hold" in late.text
    twice = await _append(service, session, [{"role": "user", "content": "a", "id": "x"}] * 2)
    assert twice.status_code == 422 and twice.json()["error"]["details"]["field"] == "messages.1"
    assert await _count(service, session) == 2


@pytest.fixture
async def cut_app() -> AsyncIterator[tuple[App, CommitCutter]]:
    """The app on PostgreSQL through a proxy that can cut a connection during COMMIT."""
    for direct in postgres_database():
        await migrate(direct)
        async with CommitCutter() as cutter:
            async for app in running_app(cutter.url(direct), embedded_worker=False):
                yield app, cutter


@pytest.mark.postgres
@pytest.mark.parametrize("when", ["after", "before"])
async def test_a_connection_dropped_during_commit_is_answered_unknown_and_a_retry_is_safe(
    cut_app: tuple[App, CommitCutter], when: str
) -> None:
    app, cutter = cut_app
    session = await app.session()
    await app.append(session, *turn(0))
    key = str(uuid.uuid4())
    cutter.arm(when)  # type: ignore[arg-type]
    dropped = await _append(app, session, turn(1), key=key)
    assert cutter.cuts == 1
    assert dropped.status_code == 503
    error = dropped.json()["error"]
    assert error["code"] == "outcome_unknown"
    assert "may or may not" in error["message"] and "nothing was written" not in error["message"]
    assert await _count(app, session) == (4 if when == "after" else 2)
    retried = await _append(app, session, turn(1), key=key)
    assert retried.status_code == 201
    assert (retried.headers.get("Idempotent-Replayed") == "true") == (when == "after")
    assert await _count(app, session) == 4, "the retry as told wrote the turn exactly once"


@pytest.mark.postgres
async def test_without_a_key_message_ids_make_the_retry_safe(
    cut_app: tuple[App, CommitCutter],
) -> None:
    app, cutter = cut_app
    session = await app.session()
    messages = [{**m, "id": f"c{i}"} for i, m in enumerate(turn(1))]
    cutter.arm("after")
    dropped = await _append(app, session, messages)
    assert dropped.status_code == 503 and "Idempotency-Key header" in dropped.text
    retried = await _append(app, session, messages)
    assert retried.status_code == 201 and retried.json()["held"] == 2
    assert await _count(app, session) == 2


async def test_a_messages_id_stays_out_of_the_context_a_model_receives(service: App) -> None:
    session = await service.session()
    await _append(service, session, [{**m, "id": f"k{i}"} for i, m in enumerate(turn(1))])
    context = (await service.client.get(f"/sessions/{session}/context")).json()
    assert all(set(m) <= {"role", "content"} for m in context["messages"]), context["messages"]
    listed = (await service.client.get(f"/sessions/{session}/messages")).json()["items"]
    assert [m["client_id"] for m in listed] == ["k0", "k1"]
