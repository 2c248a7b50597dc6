"""The service as a months-long session uses it: hundreds of tool-using turns appended over
HTTP, the background worker compacting again and again; what the user said at the start is
still in the context at the end, and the context can be asked for within a size."""

from __future__ import annotations

from pathlib import Path

import pytest

from recap_memory.eval.agent_session import FACTS, long_session
from recap_memory.eval.budget import foldable_chars
from recap_memory.messages import to_openai
from recap_memory.settings import SummarizationSettings
from tests.conftest import load_data
from tests.service.conftest import App, running_app
from tests.service.test_api import settled

LOGS = "\n".join(f"level=error svc=orders-db msg=slow query {900 + n} ms" for n in range(2000))


@pytest.mark.slow
@pytest.mark.data
async def test_planted_facts_survive_300_turns_in_the_service(tmp_path: Path) -> None:
    session = long_session(load_data("taubench_airline_dev.json"))
    whole = foldable_chars(session)
    settings = SummarizationSettings(threshold_chars=whole // 5, keep_chars=whole * 7 // 100)
    async for app in running_app(f"sqlite:///{tmp_path / 'long.db'}", summarization=settings):
        sid = await app.session(title="long support session")
        for message in session:
            await app.append(sid, to_openai(message, recap_fields=False))
        await settled(app, sid, timeout=120)
        context = (await app.client.get(f"/sessions/{sid}/context")).json()
        text = "\n".join(str(m.get("content") or "") for m in context["messages"])
        missing = [fact for fact in FACTS if fact not in text]
        assert not missing, f"lost after {len(session)} messages: {missing}"
        assert context["chars"] <= whole // 5
        rows = (await app.client.get(f"/sessions/{sid}/summaries")).json()
        assert rows and rows[0]["first_message_id"] == 2, (
            "the chain covers all after the system prompt"
        )


async def _session_with_a_huge_output(app: App) -> str:
    sid = await app.session()
    await app.append(
        sid,
        {"role": "user", "content": "Why is checkout slow?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "fetch_logs", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "fetch_logs", "content": LOGS},
    )
    return sid


async def test_the_context_is_held_within_max_chars_or_refused_with_413(tmp_path: Path) -> None:
    async for app in running_app(f"sqlite:///{tmp_path / 'cap.db'}"):
        sid = await _session_with_a_huge_output(app)
        whole = (await app.client.get(f"/sessions/{sid}/context")).json()
        assert whole["chars"] > 50_000
        held = await app.client.get(f"/sessions/{sid}/context", params={"max_chars": 5_000})
        assert held.status_code == 200, held.text
        body = held.json()
        assert body["chars"] <= 5_000
        tool = next(m for m in body["messages"] if m["role"] == "tool")
        assert "(call c1) cut to its head and tail" in tool["content"]
        tokens = await app.client.get(f"/sessions/{sid}/context", params={"max_tokens": 800})
        assert tokens.status_code == 200 and tokens.json()["tokens"] <= 800
        refused = await app.client.get(f"/sessions/{sid}/context", params={"max_chars": 10})
        assert refused.status_code == 413
        assert refused.json()["error"]["code"] == "context_too_large"
        both = await app.client.get(
            f"/sessions/{sid}/context", params={"max_chars": 10, "max_tokens": 10}
        )
        assert both.status_code == 422
        record = (await app.client.get(f"/sessions/{sid}/messages")).json()["items"]
        assert record[-1]["content"] == LOGS, "the record keeps the whole output"
