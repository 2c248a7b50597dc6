"""The OpenAI-compatible front: real clients (the ``openai`` package, LangChain's
``ChatOpenAI``) pointed at a real ``recap serve``, the stub model server behind it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_openai import ChatOpenAI

from benchmarks.processes import serving
from recap_memory.messages import from_openai, is_valid_history
from recap_memory.testing.model_server import ModelServer, Reply, Status
from tests.service.conftest import turn
from tests.service.processes import recap_env

pytestmark = pytest.mark.slow
KEY = "sk-upstream-test"
CALL = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


@pytest.fixture(scope="module")
def model() -> Iterator[ModelServer]:
    """The upstream: the stub model server on loopback."""
    with ModelServer(Reply("The invoice was paid on 3 May.")) as server:
        yield server


@pytest.fixture(scope="module")
def recap(model: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``recap serve`` with the stub as its upstream; its base URL."""
    folder = tmp_path_factory.mktemp("proxy")
    env = recap_env(
        f"sqlite:///{folder / 'recap.db'}",
        RECAP_UPSTREAM_URL=f"{model.url}/v1",
    )
    with serving(env, folder / "serve.log", cwd=folder) as (url, _):
        yield url
    assert KEY not in (folder / "serve.log").read_text(), "a key was logged"


def _upstream_messages(model: ModelServer) -> list[dict[str, Any]]:
    posted = [r for r in model.requests if r.path.endswith("/chat/completions")]
    return list(posted[-1].body["messages"])


def _chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(m.get("content"))) for m in messages)


def test_session_mode_keeps_each_message_once_and_sends_the_compacted_context(
    recap: str, model: ModelServer
) -> None:
    client = openai.OpenAI(
        base_url=f"{recap}/v1", api_key=KEY, default_headers={"X-Recap-Session": "chat-one"}
    )
    history: list[dict[str, Any]] = [{"role": "system", "content": "You help with invoices."}]
    sent_chars = []
    for n in range(16):
        history.append(turn(n)[0])
        raw = client.chat.completions.with_raw_response.create(model="m", messages=history)
        answer = raw.parse()
        history.append({"role": "assistant", "content": answer.choices[0].message.content})
        sent_chars.append(_chars(_upstream_messages(model)))
    assert answer.choices[0].message.content == "The invoice was paid on 3 May."
    upstream = _upstream_messages(model)
    assert upstream[0]["role"] == "system"
    assert "invoice 1000" not in json.dumps(upstream[2:]), "turn 0 is folded into the summary"
    assert is_valid_history([from_openai(m) for m in upstream])
    assert all(set(m) <= {"role", "content"} for m in upstream), "clean messages for a provider"
    assert max(sent_chars[-3:]) < 0.6 * _chars(history), sent_chars
    assert model.requests[-1].headers["authorization"] == f"Bearer {KEY}"
    session = dict(p.split("=") for p in raw.headers["x-recap-compacted"].split("; "))["session"]
    record = httpx.get(f"{recap}/sessions/{session}/messages", params={"limit": 100}).json()
    assert [m["content"] for m in record["items"]] == [m["content"] for m in history]


def test_the_answer_is_the_upstreams_byte_for_byte(recap: str, model: ModelServer) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "When was it paid?"}]}
    direct = httpx.post(f"{model.url}/v1/chat/completions", json=body)
    through = httpx.post(f"{recap}/v1/chat/completions", json=body)
    assert through.status_code == direct.status_code == 200
    assert through.content == direct.content
    assert through.headers["x-recap-compacted"] == "none"


def test_streaming_passes_chunks_through_and_keeps_the_reply(
    recap: str, model: ModelServer
) -> None:
    client = openai.OpenAI(
        base_url=f"{recap}/v1", api_key=KEY, default_headers={"X-Recap-Session": "chat-stream"}
    )
    question = {"role": "user", "content": "When was invoice 1007 paid?"}
    stream = client.chat.completions.create(model="m", messages=[question], stream=True)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert text.strip() == "The invoice was paid on 3 May."
    follow = {"role": "user", "content": "Thanks."}
    client.chat.completions.create(
        model="m", messages=[question, {"role": "assistant", "content": text}, follow]
    )
    sent = _upstream_messages(model)
    assert [m["role"] for m in sent] == ["user", "assistant", "user"], sent
    assert sent[1]["content"] == text


def test_a_client_leaving_mid_stream_closes_the_upstream_request(
    recap: str, model: ModelServer
) -> None:
    model.then(Reply("one two three four five six seven eight", pause_s=0.3))
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Count."}]}
    headers = {"X-Recap-Session": "chat-left"}
    with httpx.stream(
        "POST", f"{recap}/v1/chat/completions", json=body, headers=headers
    ) as response:
        first = next(response.iter_lines())
        assert first.startswith("data: ")
    deadline = time.monotonic() + 10
    while model.cut_streams == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert model.cut_streams == 1, "the upstream stream was closed when the client left"
    compacted = httpx.post(
        f"{recap}/v1/chat/completions",
        json={**body, "stream": False},
        headers=headers,
    )
    sent = _upstream_messages(model)
    assert compacted.status_code == 200 and [m["role"] for m in sent] == ["user"], sent


def test_tool_calls_across_turns_reach_the_upstream_paired(recap: str, model: ModelServer) -> None:
    client = openai.OpenAI(
        base_url=f"{recap}/v1", api_key=KEY, default_headers={"X-Recap-Session": "chat-tools"}
    )
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    history: list[dict[str, Any]] = [{"role": "user", "content": "Look up invoice 1007."}]
    model.then(Reply("", tool_calls=(CALL,)))
    first = client.chat.completions.create(model="m", messages=history, tools=tools)
    call = first.choices[0].message
    assert call.tool_calls and call.tool_calls[0].id == "call_1"
    history.append(call.model_dump(exclude_none=True))
    history.append({"role": "tool", "tool_call_id": "call_1", "content": "paid 3 May"})
    client.chat.completions.create(model="m", messages=history, tools=tools, tool_choice="auto")
    request = model.requests[-1].body
    assert request["tools"] == tools and request["tool_choice"] == "auto"
    assert [m["role"] for m in request["messages"]] == ["user", "assistant", "tool"]
    assert request["messages"][1]["tool_calls"][0]["id"] == "call_1"


async def test_stateless_mode_compacts_and_reuses_the_folded_prefix(
    recap: str, model: ModelServer
) -> None:
    client = openai.AsyncOpenAI(base_url=f"{recap}/v1", api_key=KEY)
    before = httpx.get(f"{recap}/stats").json()["summary"]["total_summarizations"]
    history: list[dict[str, Any]] = []
    notes = []
    for n in range(10):
        history.append(turn(n)[0])
        raw = await client.chat.completions.with_raw_response.create(model="m", messages=history)
        history.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
        notes.append(raw.headers["x-recap-compacted"])
    assert any(note.startswith("folded=") for note in notes), notes
    assert any(note.startswith("reused=") for note in notes), notes
    after = httpx.get(f"{recap}/stats").json()["summary"]["total_summarizations"]
    assert after - before == sum(note.startswith("folded=") for note in notes), "passes counted"
    sent = _upstream_messages(model)
    assert _chars(sent) < _chars(history) / 2
    assert is_valid_history([from_openai(m) for m in sent])


def test_langchain_chat_openai_pointed_at_recap(recap: str, model: ModelServer) -> None:
    chat = ChatOpenAI(
        base_url=f"{recap}/v1",
        api_key=KEY,  # type: ignore[arg-type]
        model="m",
        default_headers={"X-Recap-Session": "langchain"},
    )
    answer = chat.invoke([("system", "Be brief."), ("user", "When was invoice 1007 paid?")])
    assert answer.content == "The invoice was paid on 3 May."
    assert [m["role"] for m in _upstream_messages(model)] == ["system", "user"]


def test_upstream_errors_and_models_pass_through(recap: str, model: ModelServer) -> None:
    client = openai.OpenAI(base_url=f"{recap}/v1", api_key=KEY, max_retries=0)
    assert [m.id for m in client.models.list()] == ["test-model"]
    model.then(Status(429, {"error": {"message": "slow down"}}, (("Retry-After", "7"),)))
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.body == {"message": "slow down"}


def test_compact_endpoint_answers_what_recap_compact_does(recap: str) -> None:
    messages = [m for n in range(10) for m in turn(n)]
    answer = httpx.post(
        f"{recap}/v1/compact", json={"messages": messages, "policy": {"keep": {"chars": 400}}}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["report"]["compacted"] is True
    assert len(body["messages"]) < len(messages)
    assert is_valid_history([from_openai(m) for m in body["messages"]])


def test_without_an_upstream_the_proxy_says_what_to_set(tmp_path: Path) -> None:
    env = recap_env(f"sqlite:///{tmp_path / 'recap.db'}")
    with serving(env, tmp_path / "serve.log", cwd=tmp_path) as (url, _):
        answer = httpx.post(
            f"{url}/v1/chat/completions", json={"model": "m", "messages": [{"role": "user"}]}
        )
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert error["code"] == "no_upstream" and "RECAP_UPSTREAM_URL" in error["message"]
