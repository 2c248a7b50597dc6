"""Several processes on one PostgreSQL: events across processes, readiness, a database
restart, and a worker that gives its lease back on SIGTERM.

The database restart stops a private cluster of the test's own
(:class:`benchmarks.pgcluster.ThrowawayCluster`), never the machine's PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import text

from benchmarks.pgcluster import ThrowawayCluster
from recap_memory.testing.model_server import Hang, ModelServer
from tests.service.conftest import postgres_database, running_app, turn
from tests.service.processes import (
    free_port,
    recap_env,
    start_recap,
    start_worker,
    until,
    worker_env,
)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database."""
    yield from postgres_database()


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(event, data) pairs of a text/event-stream response."""
    event, data = "message", ""
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            yield event, json.loads(data)
            event, data = "message", ""


@pytest.mark.postgres
async def test_a_compaction_by_a_worker_elsewhere_reaches_the_servers_clients(
    postgres_url: str, tmp_path: Path
) -> None:
    ports = [free_port(), free_port()]
    servers = [
        start_recap(
            ["serve", "--port", str(port)],
            recap_env(postgres_url, RECAP_EMBEDDED_WORKER="false"),
            tmp_path / f"serve{n}.log",
        )
        for n, port in enumerate(ports)
    ]
    logs = [tmp_path / "serve0.log", tmp_path / "serve1.log", tmp_path / "worker.log"]
    worker = None
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            for port in ports:

                async def ready(port: int = port) -> bool:
                    try:
                        r = await client.get(f"http://127.0.0.1:{port}/readyz")
                    except httpx.TransportError:
                        return False
                    return r.status_code == 200

                await until(f"server on {port} ready", ready, logs)
            one, two = (f"http://127.0.0.1:{port}" for port in ports)
            session = (await client.post(f"{one}/sessions", json={})).json()["id"]
            async with client.stream("GET", f"{one}/sessions/{session}/events") as stream:
                events = sse_events(stream)
                assert (await anext(events))[0] == "session.state"
                for n in range(12):  # appended through the other server
                    await client.post(
                        f"{two}/sessions/{session}/messages", json={"messages": turn(n)}
                    )
                assert (await client.get(f"{two}/sessions/{session}")).json()["due"]
                worker = start_worker(recap_env(postgres_url), tmp_path / "worker.log")
                seen = []
                async with asyncio.timeout(30):
                    async for event in events:
                        seen.append(event)
                        if event[0] == "summarization.finished":
                            break
            assert seen[0][0] == "summarization.started", seen
            assert seen[-1][1]["summary"]["episode_range"].startswith("1-")
    finally:
        for process in [*servers, *([worker] if worker else [])]:
            process.terminate()
            process.wait(timeout=30)


async def test_readiness_follows_the_schema(database_url: str, tmp_path: Path) -> None:
    async for app in running_app(database_url):
        ready = await app.client.get("/readyz")
        assert ready.json() == {"status": "ready", "schema": "0003"}
        async with app.state.store.engine.begin() as connection:
            await connection.execute(text("UPDATE alembic_version SET version_num = '0000'"))
        outdated = await app.client.get("/readyz")
        assert outdated.status_code == 503 and "recap migrate" in outdated.json()["reason"]
    refused = subprocess.run(
        [sys.executable, "-m", "recap_memory", "serve", "--port", str(free_port())],
        env=recap_env(database_url, RECAP_MIGRATE_ON_START="false"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "run `recap migrate`" in refused.stderr, refused.stderr


@pytest.fixture
def private_cluster() -> Iterator[ThrowawayCluster]:
    """A PostgreSQL cluster of this test's own, which it may stop (the machine's never)."""
    with ThrowawayCluster() as cluster:
        yield cluster


@pytest.mark.postgres
@pytest.mark.slow
async def test_requests_fail_fast_while_postgres_is_down_and_recover(
    private_cluster: ThrowawayCluster,
) -> None:
    with psycopg.connect(private_cluster.url, autocommit=True) as admin:
        admin.execute('CREATE DATABASE "recap"')
    async for app in running_app(private_cluster.database_url("recap"), embedded_worker=False):
        session = await app.session()
        await app.append(session, *turn(0))
        await asyncio.to_thread(private_cluster.stop)
        try:
            started = time.monotonic()
            failed = await app.client.post(
                f"/sessions/{session}/messages", json={"messages": turn(1)}
            )
            assert failed.status_code == 503, failed.text
            assert failed.json()["error"]["code"] == "database_unavailable"
            assert time.monotonic() - started < 10, "failing took too long"
            assert (await app.client.get("/readyz")).status_code == 503
        finally:
            await asyncio.to_thread(private_cluster.start)
        await until("readiness again", _ready(app.client), [], timeout=30)
        ids = await app.append(session, *turn(2))
        listed = (await app.client.get(f"/sessions/{session}/messages")).json()["items"]
        assert [m["id"] for m in listed][-2:] == ids and len(listed) == 4, (
            "the failed append wrote nothing"
        )
        await until("the event listener back", app.state.relay.listening.is_set, [], timeout=30)
        async with app.state.bus.subscribe(session) as queue:
            await app.client.post(f"/sessions/{session}/compact")
            async with asyncio.timeout(10):
                assert (await queue.get()).name == "summarization.started"


def _ready(client: httpx.AsyncClient) -> Any:
    async def check() -> bool:
        return (await client.get("/readyz")).status_code == 200

    return check


@pytest.mark.slow  # a real process's lifecycle
async def test_sigterm_makes_a_worker_give_its_lease_back(
    database_url: str, tmp_path: Path
) -> None:
    with ModelServer(default=Hang(60)) as model:
        async for app in running_app(database_url, embedded_worker=False):
            session = await app.session()
            for n in range(12):
                await app.append(session, *turn(n))
            env = {
                **worker_env(database_url, model.url),
                "RECAP_LEASE_S": "120",
                "RECAP_SHUTDOWN_GRACE_S": "0.5",
            }
            log = tmp_path / "worker.log"
            worker = start_worker(env, log)
            try:

                async def compacting(app: Any = app, session: str = session) -> bool:
                    state = (await app.client.get(f"/sessions/{session}")).json()
                    return bool(state["compacting"])

                await until("the worker mid-compaction", compacting, [log])
                worker.send_signal(signal.SIGTERM)
                assert worker.wait(timeout=20) == 0, log.read_text()
            finally:
                if worker.poll() is None:
                    worker.kill()
            state = (await app.client.get(f"/sessions/{session}")).json()
            assert not state["compacting"] and state["due"], "lease given back, session still due"
            assert "stopped" in log.read_text()


@pytest.mark.postgres
def test_processes_starting_together_migrate_one_after_another(postgres_url: str) -> None:
    """Without the migration lock, two of three would fail on a duplicate table."""
    migrations = [
        subprocess.Popen(
            [sys.executable, "-m", "recap_memory", "migrate"],
            env=recap_env(postgres_url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    results = [(m.wait(timeout=60), m.communicate()) for m in migrations]
    assert [code for code, _ in results] == [0, 0, 0], results
