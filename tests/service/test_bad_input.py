"""Every bad-input kind gets a clear error with the right status and writes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.service.conftest import App, running_app

CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
    ],
}


@pytest.fixture
async def small(database_url: str) -> AsyncIterator[App]:
    """An app with small size limits."""
    async for app in running_app(
        database_url, max_body_bytes=20_000, max_message_chars=5_000, max_messages_per_request=5
    ):
        yield app


async def _unchanged(app: App, session: str, before: dict[str, Any]) -> None:
    after = (await app.client.get(f"/sessions/{session}")).json()
    keys = ("message_count", "char_count", "context_chars", "updated_at")
    assert {k: after[k] for k in keys} == {k: before[k] for k in keys}


@pytest.mark.parametrize(
    ("messages", "status", "code", "field"),
    [
        ([{"role": "robot", "content": "hi"}], 422, "invalid_messages", "messages.0"),
        ([{"role": "user", "content": 42}], 422, "invalid_messages", "messages.0"),
        (
            [{"role": "user", "content": "ok"}, {"role": "tool", "content": "x"}],
            422,
            "invalid_messages",
            "messages.1",
        ),
        (
            [{"role": "user", "content": "ok"}, {"role": "tool", "tool_call_id": "zz"}],
            422,
            "invalid_messages",
            "messages.1",
        ),
        ([CALL, {"role": "user", "content": "no results"}], 422, "invalid_messages", "messages.0"),
        ([{"role": "user", "content": "x" * 5_001}], 413, "payload_too_large", None),
        ([{"role": "user", "content": "x"}] * 6, 413, "payload_too_large", None),
    ],
)
async def test_bad_messages_are_refused_and_nothing_is_written(
    small: App, messages: list[Any], status: int, code: str, field: str | None
) -> None:
    session = await small.session()
    await small.append(session, {"role": "user", "content": "kept"})
    before = (await small.client.get(f"/sessions/{session}")).json()
    response = await small.client.post(f"/sessions/{session}/messages", json={"messages": messages})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    if field:
        assert error["details"]["field"] == field
    await _unchanged(small, session, before)


async def test_tool_results_may_arrive_in_a_later_request(small: App) -> None:
    session = await small.session()
    await small.append(session, {"role": "user", "content": "look both up"}, CALL)
    early = await small.client.post(
        f"/sessions/{session}/messages", json={"messages": [{"role": "user", "content": "?"}]}
    )
    assert early.status_code == 422
    assert "'c1', 'c2'" in early.json()["error"]["message"]
    assert "append those first" in early.json()["error"]["message"]
    ids = await small.append(
        session,
        {"role": "tool", "tool_call_id": "c2", "content": "two"},
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "user", "content": "thanks"},
    )
    assert len(ids) == 3
    stray = await small.client.post(
        f"/sessions/{session}/messages",
        json={"messages": [{"role": "tool", "tool_call_id": "c1", "content": "again"}]},
    )
    assert stray.status_code == 422


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"{not json", "body"),
        (b'{"messages": "hello"}', "body.messages"),
        (b'{"messages": []}', "body.messages"),
        (b'{"messages": [{"role": "user", "content": "x"}], "extra": 1}', "body.extra"),
    ],
)
async def test_malformed_bodies_get_422_with_the_field_path(
    small: App, body: bytes, field: str
) -> None:
    _, error = await _refused_body(small, body)
    assert error["details"][0]["field"].startswith(field), error


async def _refused_body(app: App, body: bytes) -> tuple[str, dict[str, Any]]:
    """Send ``body`` as JSON to a new session's append: the session and the 422's error."""
    session = await app.session()
    response = await app.client.post(
        f"/sessions/{session}/messages",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request", error
    return session, error


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"messages": [{"role": "user", "content": "caf\xe9"}]}', "not valid UTF-8"),
        (b'{"messages": ' + b"[" * 3_000 + b"]" * 3_000 + b"}", "nested too deep"),
    ],
)
async def test_a_body_that_cannot_be_read_as_json_gets_422_like_any_malformed_body(
    small: App, body: bytes, reason: str
) -> None:
    session, error = await _refused_body(small, body)
    assert error["details"][0]["field"] == "body"
    assert reason in error["message"] and "send UTF-8 JSON" in error["message"]
    assert (await small.client.get(f"/sessions/{session}")).json()["message_count"] == 0


async def test_oversized_bodies_get_413(small: App) -> None:
    session = await small.session()
    big = {"messages": [{"role": "user", "content": "y" * 30_000}]}
    response = await small.client.post(f"/sessions/{session}/messages", json=big)
    assert response.status_code == 413
    assert "RECAP_MAX_BODY_BYTES" in response.json()["error"]["message"]

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(30):
            yield b"z" * 1_000
        yield b'"}]}'

    streamed = await small.client.post(
        f"/sessions/{session}/messages",
        content=chunks(),
        headers={"content-type": "application/json"},
    )
    assert streamed.status_code == 413
    assert (await small.client.get(f"/sessions/{session}")).json()["message_count"] == 0


@pytest.mark.parametrize(
    "body",
    [
        b'{"messages": [{"role": "user", "content": "a \\u0000 b"}]}',
        b'{"messages": [{"role": "user", "content": "\\ud800"}]}',
        b'{"messages": [{"role": "user", "content": "x", "name": "\\udfff"}]}',
    ],
)
async def test_text_that_cannot_be_stored_is_refused(small: App, body: bytes) -> None:
    """Found by the API fuzzer: NUL and lone surrogates (PostgreSQL text, UTF-8)."""
    session = await small.session()
    response = await small.client.post(
        f"/sessions/{session}/messages", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    titled = await small.client.post("/sessions", json={"title": "nul \x00 here"})
    assert titled.status_code == 422
    deep: object = "bottom"
    for _ in range(100):
        deep = [deep]
    nested = await small.client.post("/sessions", json={"metadata": {"k": deep}})
    assert nested.status_code == 422 and "nested" in nested.json()["error"]["message"]
    context = await small.client.get(f"/sessions/{session}/context")
    assert context.status_code == 200 and context.json()["messages"] == []


async def test_unknown_sessions_and_bad_queries(small: App) -> None:
    for method, path in [
        ("GET", "/sessions/nope"),
        ("DELETE", "/sessions/nope"),
        ("GET", "/sessions/nope/context"),
        ("GET", "/sessions/nope/summaries"),
        ("POST", "/sessions/nope/compact"),
        ("GET", "/sessions/nope/events"),
        ("GET", "/sessions/nope/messages"),
        ("GET", "/sessions/nul%00byte"),
        ("GET", f"/sessions/{'x' * 5000}/context"),
    ]:
        response = await small.client.request(method, path)
        assert response.status_code == 404, (method, path)
        assert response.json()["error"]["code"] == "not_found"
    bad = await small.client.get("/sessions", params={"limit": 0})
    assert bad.status_code == 422 and bad.json()["error"]["details"][0]["field"] == "query.limit"
