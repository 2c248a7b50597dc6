"""The routes the web console uses: its files, its settings, the compaction history, chat."""

from __future__ import annotations

import json
from collections.abc import Sequence

from recap_memory.llm import FakeModel
from recap_memory.settings import SummarizationSettings
from tests.service.conftest import App, running_app
from tests.service.test_api import drive, settled


async def test_the_console_is_served_at_the_root(service: App) -> None:
    page = await service.client.get("/")
    assert page.status_code == 200 and 'id="summarising"' in page.text
    script = await service.client.get("/static/app.js")
    assert script.status_code == 200 and "summarization.started" in script.text
    assert script.headers["content-type"].startswith("text/javascript")  # runs as a module
    assert "/" not in (await service.client.get("/openapi.json")).json()["paths"]


async def test_config_and_compaction_history(service: App) -> None:
    config = (await service.client.get("/config")).json()
    assert config == {
        "threshold": {"chars": 2000},
        "keep": {"chars": 600},
        "max": None,
        "summarizer": "extractive",
        "chat_model": None,
    }
    session = await service.session(title="Invoices")
    await drive(service, session, 12)
    await settled(service, session)
    history = (await service.client.get("/stats/compactions")).json()
    stats = (await service.client.get("/stats")).json()["summary"]
    assert len(history) == stats["total_summarizations"] > 0
    assert all(p["chars_after"] < p["chars_before"] for p in history)
    title = (await service.client.get(f"/sessions/{session}")).json()["title"]
    assert {(p["session"], p["title"]) for p in history} == {(session, title)}
    running = [p["tokens_saved_total"] for p in history]
    assert running == [
        sum(p["tokens_saved"] for p in history[: n + 1]) for n in range(len(history))
    ]
    assert running[-1] == stats["estimated_tokens_saved"] > 0
    chat = await service.client.post(f"/sessions/{session}/chat", json={"content": "hi"})
    assert chat.status_code == 409 and "RECAP_CHAT_MODEL" in chat.json()["error"]["message"]


async def test_config_names_the_hard_cap_when_one_is_set(database_url: str) -> None:
    capped = SummarizationSettings(threshold_chars=2_000, keep_chars=600, max_chars=3_000)
    async for running in running_app(database_url, summarization=capped):
        config = (await running.client.get("/config")).json()
    assert config["max"] == {"chars": 3000} and config["threshold"] == {"chars": 2000}


async def test_chat_answers_through_the_compacted_context(database_url: str) -> None:
    seen: list[Sequence[dict[str, str]]] = []

    def answer(messages: Sequence[dict[str, str]]) -> str:
        seen.append(messages)
        return "Invoice 1007 was paid."

    model = FakeModel(default=answer, name="scripted-chat")
    async for running in running_app(database_url, chat_model=model):
        session = await running.session()
        await drive(running, session, 12)
        await settled(running, session)
        reply = await running.client.post(
            f"/sessions/{session}/chat", json={"content": "And 1007?"}
        )
        assert reply.status_code == 200, reply.text
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = [
            (block.split("\n")[0].removeprefix("event: "), json.loads(block.split("data: ", 1)[1]))
            for block in reply.text.strip().split("\n\n")
        ]
        names = [name for name, _ in events]
        assert names[0] == "user" and names[-1] == "done" and names.count("delta") == 4
        assert "".join(d["text"] for n, d in events if n == "delta") == "Invoice 1007 was paid."
        assert events[-1][1]["assistant"]["content"] == "Invoice 1007 was paid."
        sent = seen[-1]
        assert sent[0]["content"].startswith("[recap summary of messages")
        assert sent[-1] == {"role": "user", "content": "And 1007?"}
        record = (await running.client.get(f"/sessions/{session}/messages?limit=1000")).json()
        assert [m["content"] for m in record["items"][-2:]] == [
            "And 1007?",
            "Invoice 1007 was paid.",
        ]
        assert (await running.client.get("/config")).json()["chat_model"] == "scripted-chat"


async def test_a_failing_chat_model_keeps_the_question_and_says_why(database_url: str) -> None:
    from recap_memory.errors import BackendError

    model = FakeModel(default=BackendError("chat model down", kind="connection"))
    async for running in running_app(database_url, chat_model=model):
        session = await running.session()
        reply = await running.client.post(f"/sessions/{session}/chat", json={"content": "Hello?"})
        assert "event: error" in reply.text and "chat model down" in reply.text
        record = (await running.client.get(f"/sessions/{session}/messages")).json()["items"]
        assert [(m["role"], m["content"]) for m in record] == [("user", "Hello?")]
