"""A ``recap worker`` killed mid-compaction (a real process, SIGKILL) leaves the session to be
finished by another worker once its lease expires, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any, cast

from recap.testing.model_server import Hang, ModelServer, Reply
from tests.conftest import CLEAN_ENV
from tests.service.conftest import SMALL, App, running_app, turn

LEASE_S = 2.0
SUMMARY = (
    "The user asked about a batch of tickets and their invoices; the assistant matched each "
    "ticket to its customer and resolved them one by one."
)


def worker_env(database_url: str, model_url: str) -> dict[str, str]:
    """A ``recap worker`` on the test database, summarizing through the model server, with the
    app's thresholds, a short lease and a fast poll."""
    return {
        **CLEAN_ENV,
        "RECAP_DATABASE_URL": database_url,
        "RECAP_LLM": "openai:test-model",
        "RECAP_LLM_URL": model_url,
        "RECAP_FALLBACK": "none",
        "RECAP_LLM_ATTEMPTS": "1",
        "RECAP_LLM_TIMEOUT": "120",
        "RECAP_LEASE_S": str(LEASE_S),
        "RECAP_POLL_INTERVAL_S": "0.1",
        "RECAP_RETRY_BASE_S": "0.2",
        "RECAP_THRESHOLD_CHARS": str(SMALL.threshold_chars),
        "RECAP_KEEP_CHARS": str(SMALL.keep_chars),
    }


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``python -m recap worker`` in its own process, its output in ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "recap", "worker"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


async def until(
    what: str, check: Callable[[], Any], logs: list[Path], timeout: float = 30.0
) -> None:
    """Wait (bounded) for ``check()`` (sync or async) to be true; fail with the workers' logs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            output = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')}" for p in logs)
            raise AssertionError(f"timed out waiting for {what}\n{output}")
        await asyncio.sleep(0.05)


async def session_state(app: App, session: str) -> dict[str, Any]:
    response = await app.client.get(f"/sessions/{session}")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_a_worker_killed_mid_compaction_leaves_the_session_to_another(
    database_url: str, tmp_path: Path
) -> None:
    logs = [tmp_path / "worker-1.log", tmp_path / "worker-2.log"]
    workers: list[subprocess.Popen[bytes]] = []
    with ModelServer(Reply(SUMMARY)) as server:
        server.then(Hang(60))  # the first worker's request: no answer while it lives
        env = worker_env(database_url, server.url)
        try:
            apps = cast(AsyncGenerator[App, None], running_app(database_url, embedded_worker=False))
            async with contextlib.aclosing(apps):
                app = await anext(apps)
                session = await app.session()
                ids: list[int] = []
                for n in range(6):
                    ids += await app.append(session, *turn(n))
                before = await session_state(app, session)
                assert before["due"] and not before["compacting"], before

                workers.append(start_worker(env, logs[0]))
                first = workers[0]

                async def mid_compaction() -> bool:
                    assert first.poll() is None, logs[0].read_text(errors="replace")
                    state = await session_state(app, session)
                    return len(server.requests) == 1 and bool(state["compacting"])

                await until("worker 1 to call the model under a lease", mid_compaction, logs)
                request = server.requests[0]
                assert request.path.endswith("/chat/completions")
                assert request.body["model"] == "test-model"
                first.send_signal(signal.SIGKILL)
                assert first.wait(timeout=10) == -signal.SIGKILL

                killed = await session_state(app, session)
                assert killed["due"] and killed["summarized_through"] is None, killed
                assert (await app.client.get(f"/sessions/{session}/summaries")).json() == []

                workers.append(start_worker(env, logs[1]))
                second = workers[1]

                async def finished() -> bool:
                    assert second.poll() is None, logs[1].read_text(errors="replace")
                    state = await session_state(app, session)
                    return not state["due"] and not state["compacting"]

                await until("worker 2 to finish the session", finished, logs)
                after = await session_state(app, session)
                assert after["summarized_through"] is not None, after
                assert after["failures"] == 0 and after["last_error"] is None, after
                assert len(server.requests) == 2  # the hung one, then the answered one

                rows = await app.state.store.summaries("default", session)
                assert len(rows) == 1
                assert rows[0].first_message_id == ids[0]
                assert rows[0].last_message_id == after["summarized_through"]
                assert rows[0].text == SUMMARY and rows[0].strategy == "llm"
                listed = await app.client.get(
                    f"/sessions/{session}/summaries", params={"include_superseded": "true"}
                )
                assert listed.status_code == 200, listed.text
                assert [s["id"] for s in listed.json()] == [rows[0].id]

                events = await app.state.store.usage_events("default")
                passes = [e for e in events if e.kind == "compaction"]
                assert [e.path for e in passes] == ["llm"], [(e.path, e.reason) for e in passes]
                calls = [e for e in events if e.kind == "model_call"]
                assert [e.path for e in calls] == ["ok"]

                page = await app.client.get(f"/sessions/{session}/messages")
                assert [m["content"] for m in page.json()["items"]] == [
                    m["content"] for n in range(6) for m in turn(n)
                ]
                assert page.json()["next_after"] is None

                second.send_signal(signal.SIGTERM)
                try:
                    code = second.wait(timeout=LEASE_S + 15)
                except subprocess.TimeoutExpired:
                    raise AssertionError(
                        "worker 2 did not stop on SIGTERM\n" + logs[1].read_text(errors="replace")
                    ) from None
                assert code == 0, logs[1].read_text(errors="replace")
                assert "stopped" in logs[1].read_text(errors="replace")
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.kill()
                    worker.wait(timeout=10)
