"""A ``recap worker`` killed mid-compaction (a real process, SIGKILL) leaves the session to be
finished by another worker once its lease expires, on SQLite and PostgreSQL; a ``recap serve``
killed mid-compaction and restarted takes its dead self's lease back at once."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from benchmarks.processes import serving
from recap_memory.testing.model_server import Hang, ModelServer, Reply
from tests.service.conftest import App, running_app, turn
from tests.service.processes import LEASE_S, start_worker, until, worker_env

SUMMARY = (
    "The user asked about a batch of tickets and their invoices; the assistant matched each "
    "ticket to its customer and resolved them one by one."
)


async def session_state(app: App, session: str) -> dict[str, Any]:
    response = await app.client.get(f"/sessions/{session}")
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.mark.slow  # a real process's lifecycle
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


@pytest.mark.slow  # real processes
@pytest.mark.parametrize("restarted_with", ["embedded worker", "compact request"])
async def test_a_server_killed_mid_compaction_and_restarted_compacts_at_once(
    tmp_path: Path, restarted_with: str
) -> None:
    """Issue 18 item 4: with a long lease (120 s) the restarted server does not wait it out:
    its worker compacts the session within seconds, and ``POST /compact`` is not a 409."""
    database_url = f"sqlite:///{tmp_path / 'recap.db'}"
    with ModelServer(Reply(SUMMARY)) as model:
        model.then(Hang(60))  # the first server's pass: no answer while it lives
        env = {**worker_env(database_url, model.url), "RECAP_LEASE_S": "120"}
        with serving(env, tmp_path / "serve-1.log") as (url, first):
            session = httpx.post(f"{url}/sessions", json={}).json()["id"]
            for n in range(6):
                appended = httpx.post(
                    f"{url}/sessions/{session}/messages", json={"messages": turn(n)}
                )
                assert appended.status_code == 201, appended.text

            def mid_compaction() -> bool:
                state = httpx.get(f"{url}/sessions/{session}").json()
                return len(model.requests) == 1 and bool(state["compacting"])

            await until("the server to call the model under a lease", mid_compaction, [])
            first.send_signal(signal.SIGKILL)
            assert first.wait(timeout=10) == -signal.SIGKILL

        worker = "true" if restarted_with == "embedded worker" else "false"
        restarted = {**env, "RECAP_EMBEDDED_WORKER": worker}
        log = tmp_path / "serve-2.log"
        with serving(restarted, log) as (url, _):
            if restarted_with == "compact request":
                response = httpx.post(f"{url}/sessions/{session}/compact", timeout=30)
                assert response.status_code == 200, response.text
                assert response.json()["path"] == "llm", response.json()
            else:

                def compacted() -> bool:
                    state = httpx.get(f"{url}/sessions/{session}").json()
                    return state["summarized_through"] is not None and not state["compacting"]

                await until("the restarted server to compact the session", compacted, [log], 5)
            state = httpx.get(f"{url}/sessions/{session}").json()
            assert not state["due"] and state["failures"] == 0, state
            rows = httpx.get(f"{url}/sessions/{session}/summaries").json()
            assert [r["content"] for r in rows] == [SUMMARY]
            assert len(model.requests) == 2  # the hung call, then the answered one
