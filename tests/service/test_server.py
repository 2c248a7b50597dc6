"""``recap serve`` as users run it: a real process on a free loopback port, its docs, and
the Server-Sent Events of a compaction it runs in the background."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks import responsive
from benchmarks.processes import free_port, serving
from tests.service.conftest import turn
from tests.service.processes import recap_env


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[str]:
    """``recap serve`` on a free port; its base URL. It must stop cleanly on SIGTERM."""
    log = tmp_path / "serve.log"
    env = recap_env(RECAP_DATABASE_URL=database_url, RECAP_POLL_INTERVAL_S="0.1")
    with serving(env, log, cwd=tmp_path) as (url, process):
        yield url
    output = log.read_text()
    assert process.returncode == 0, output  # a graceful stop on SIGTERM exits 0
    assert "recap service ready" in output and "Traceback" not in output, output


def _sse(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """(event, data) pairs from a text/event-stream."""
    event, data = "message", []
    for line in lines:
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            yield event, json.loads("\n".join(data))
            event, data = "message", []


def test_serve_answers_with_docs_and_streams_compaction_events(server: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as client:
        assert "swagger" in client.get("/docs").text.lower()
        session = client.post("/sessions", json={"title": "live"}).json()["id"]
        with client.stream("GET", f"/sessions/{session}/events") as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            events = _sse(stream.iter_lines())
            name, state = next(events)
            assert name == "session.state" and state["id"] == session
            for n in range(12):
                client.post(f"/sessions/{session}/messages", json={"messages": turn(n)})
            seen = []
            for name, data in events:
                seen.append((name, data))
                if name in ("summarization.finished", "summarization.failed"):
                    break
        names = [n for n, _ in seen]
        assert names[0] == "summarization.started" and names[-1] == "summarization.finished"
        finished = seen[-1][1]
        assert finished["context"]["chars_after"] < finished["context"]["chars_before"]
        rows = client.get(
            f"/sessions/{session}/summaries", params={"include_superseded": True}
        ).json()
        assert finished["summary"]["episode_range"] in [r["episode_range"] for r in rows]
        assert finished["summary"]["episode_range"].startswith("1-")
        stats = client.get("/stats").json()["summary"]
        assert stats["total_summarizations"] >= 1 and stats["sessions_compacted"] == 1


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RECAP_THRESHOLD_CHARS": "100", "RECAP_KEEP_CHARS": "500"}, "must be below"),
        ({"RECAP_LLM": "nosuch:model"}, "nosuch"),
        ({"RECAP_HOST": "0.0.0.0"}, "RECAP_API_KEYS"),
        ({"RECAP_DATABASE_URL": "mysql://root@localhost/x"}, "sqlite or postgresql"),
        ({"RECAP_API_KEYS": "only-a-key"}, "KEY:TENANT"),
        ({"RECAP_LEASE_S": "-1"}, "RECAP_LEASE_S"),
        ({"RECAP_LOG_FORMAT": "xml"}, "RECAP_LOG_FORMAT"),
    ],
)
def test_serve_refuses_bad_settings_with_one_line(
    env: dict[str, str], message: str, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "recap_memory", "serve", "--port", str(free_port())],
        env=recap_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not os.path.exists(tmp_path / "recap.db"), "nothing was created"


def test_serve_says_so_when_the_database_cannot_be_reached(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "recap_memory", "serve", "--port", str(free_port())],
        env=recap_env(RECAP_DATABASE_URL="postgresql://nobody:secret@127.0.0.1:1/none"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("recap: error: could not open the database")
    assert "secret" not in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_migrate_brings_a_new_database_to_the_newest_schema(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    result = subprocess.run(
        [sys.executable, "-m", "recap_memory", "migrate"],
        env=recap_env(RECAP_DATABASE_URL=url),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "newest schema" in result.stdout and (tmp_path / "fresh.db").exists()


@pytest.mark.slow  # a real process's lifecycle
def test_sigterm_lets_the_server_finish_requests_in_flight(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from recap_memory.testing.model_server import Hang, ModelServer

    port = free_port()
    with ModelServer(default=Hang(2)) as model:
        env = recap_env(
            RECAP_DATABASE_URL=f"sqlite:///{tmp_path / 'recap.db'}",
            RECAP_EMBEDDED_WORKER="false",
            RECAP_LLM="openai:slow",
            RECAP_LLM_URL=model.url,
            RECAP_LLM_ATTEMPTS="1",
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "recap_memory", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(f"{url}/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            session = httpx.post(f"{url}/sessions", json={}).json()["id"]
            for n in range(12):
                httpx.post(f"{url}/sessions/{session}/messages", json={"messages": turn(n)})
            with ThreadPoolExecutor(1) as pool:
                # the model hangs 2 s, then the extractive fallback answers: a slow request
                slow = pool.submit(
                    httpx.get, f"{url}/sessions/{session}/context?compact=sync", timeout=30
                )
                time.sleep(0.8)
                process.terminate()
                response = slow.result()
            assert response.status_code == 200, response.text
            assert response.json()["summarized_through"] is not None
            assert process.wait(timeout=20) == 0
        finally:
            if process.poll() is None:
                process.kill()


def test_sigterm_ends_open_event_streams_and_exits_at_once(tmp_path: Path) -> None:
    """An open SSE stream does not hold the shutdown up to uvicorn's graceful timeout (to be
    cancelled then, with a CancelledError in the log): it ends, and the process exits 0."""
    log = tmp_path / "serve.log"
    env = recap_env(RECAP_DATABASE_URL=f"sqlite:///{tmp_path / 'recap.db'}")
    with serving(env, log, cwd=tmp_path) as (url, process), httpx.Client(base_url=url) as client:
        sessions = [client.post("/sessions", json={}).json()["id"] for _ in range(2)]
        with (
            client.stream("GET", f"/sessions/{sessions[0]}/events") as first,
            client.stream("GET", f"/sessions/{sessions[1]}/events") as second,
        ):
            streams = [_sse(first.iter_lines()), _sse(second.iter_lines())]
            assert [next(events)[0] for events in streams] == ["session.state"] * 2
            stopping = time.monotonic()
            process.terminate()
            assert [list(events) for events in streams] == [[], []]  # each ends cleanly
            code = process.wait(timeout=10)
            took = time.monotonic() - stopping
    output = log.read_text()
    assert code == 0 and took < 3, (code, took, output)
    for problem in ("CancelledError", "Traceback", "timeout graceful shutdown exceeded"):
        assert problem not in output, output


def test_a_busy_port_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "recap_memory", "serve", "--port", str(port)],
            env=recap_env(RECAP_DATABASE_URL=f"sqlite:///{tmp_path / 'recap.db'}"),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"port {port}" in result.stderr and "--port" in result.stderr
    assert "RECAP_PORT" in result.stderr and "serving on" not in result.stdout


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_log_lines_carry_time_level_request_and_session(log_format: str, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    env = recap_env(
        RECAP_DATABASE_URL=f"sqlite:///{tmp_path / 'recap.db'}", RECAP_LOG_FORMAT=log_format
    )
    with serving(env, log, cwd=tmp_path) as (url, _), httpx.Client(base_url=url) as client:
        session = client.post("/sessions", json={}).json()["id"]
        for n in range(12):
            client.post(f"/sessions/{session}/messages", json={"messages": turn(n)})
        context = client.get(f"/sessions/{session}/context", params={"compact": "sync"})
        assert context.status_code == 200, context.text
    lines = [line for line in log.read_text().splitlines() if "summarizer done" in line]
    assert lines, log.read_text()
    if log_format == "json":
        entry = json.loads(lines[0])
        assert entry["level"] == "info" and entry["logger"] == "recap_memory.compactor"
        assert entry["session"] == session and entry["request"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"])
    else:
        pattern = (
            r"\d{4}-\d\d-\d\dT[\d:.]+Z info recap_memory\.compactor "
            rf"request=\w+ session={session}: \[\w+\] summarizer done: .*"
        )
        assert re.fullmatch(pattern, lines[0]), lines[0]


@pytest.mark.slow
def test_healthz_stays_fast_while_a_7mb_append_is_compacted(tmp_path: Path) -> None:
    """1,000 messages (6.8 MB) in one append, then the pass they make due: a liveness probe
    never waits on them (it waited 1-5 s when parsing, measuring and summarizing ran on the
    server's event loop or in its interpreter)."""
    figures = responsive.measure(tmp_path)
    assert figures.body_bytes > 6_800_000 and figures.folded_messages > 900, figures
    assert figures.busy.samples > 100, figures  # probed all through the pass
    assert figures.busy.p99_ms < 100, figures
    assert figures.busy.max_ms < 250, figures
