"""``recap compact --llm …`` end to end: a real process against a real model server."""

from __future__ import annotations

import json
from pathlib import Path

from recap_memory.testing.model_server import ModelServer, Reply
from tests.conftest import ROOT, recap

EXAMPLE = ROOT / "examples" / "incident_session.json"
SMALL = ["--threshold-chars", "12000", "--keep-chars", "4000"]
SUMMARY = (
    "**Investigating:** checkout 500s since 14:10 UTC.\n**Key findings:**\n"
    "- payments-db pool exhausted after deploy v2.31.0\n**Current state:** rollback proposed."
)


def test_the_summary_is_the_model_servers_reply(tmp_path: Path):
    report = tmp_path / "report.json"
    with ModelServer(Reply(SUMMARY, prompt_tokens=1500, completion_tokens=60)) as server:
        run = recap(
            "compact", str(EXAMPLE), *SMALL, "--llm", "ollama:qwen2.5:3b", "--llm-url",
            server.url, "--temperature", "0.1", "--max-tokens", "300", "--report", str(report),
        )  # fmt: skip
    assert run.returncode == 0, run.stderr
    history = json.loads(run.stdout)
    assert history[1]["content"].startswith("[recap summary")
    assert SUMMARY in history[1]["content"]
    assert server.requests[0].body["model"] == "qwen2.5:3b"
    assert server.requests[0].body["options"]["temperature"] == 0.1
    assert server.requests[0].body["options"]["num_predict"] == 300
    figures = json.loads(report.read_text())
    assert figures["path"] == "summarized" and figures["strategy"] == "llm"
    assert figures["usage"][0]["prompt_tokens"] == 1500
    assert figures["model_calls"] == len(server.requests)


def test_with_the_server_gone_the_extractive_fallback_compacts(tmp_path: Path):
    with ModelServer() as server:
        url = server.url
    report = tmp_path / "report.json"
    run = recap(
        "compact", str(EXAMPLE), *SMALL, "--llm", "ollama:qwen2.5:3b", "--llm-url", url,
        "--report", str(report),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "recap: warning:" in run.stderr and "extractive fallback" in run.stderr
    history = json.loads(run.stdout)
    assert history[1]["content"].startswith("[recap summary")
    figures = json.loads(report.read_text())
    assert figures["path"] == "fallback" and figures["strategy"] == "extractive"
    assert "is the server running" in figures["reason"]
    assert figures["usage"][0]["attempts"] == 3  # retried, then gave up


def test_with_fallback_none_a_model_failure_exits_3_and_writes_nothing(tmp_path: Path):
    with ModelServer() as server:
        url = server.url
    out = tmp_path / "out.json"
    run = recap(
        "compact", str(EXAMPLE), *SMALL, "--llm", "ollama:qwen2.5:3b", "--llm-url", url,
        "--fallback", "none", "-o", str(out),
    )  # fmt: skip
    assert run.returncode == 3, run.stderr
    assert "recap: warning:" in run.stderr and "history unchanged" in run.stderr
    assert "recap: error:" in run.stderr and "nothing was written" in run.stderr
    assert not out.exists() and not list(tmp_path.iterdir())
    assert run.stdout == ""


def test_the_environment_selects_the_model():
    with ModelServer(Reply(SUMMARY)) as server:
        run = recap(
            "compact", str(EXAMPLE), *SMALL,
            env={"UTILITY_MODEL": "llama3.2", "INFERENCE_SERVICE_URL": server.url},
        )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert server.requests and server.requests[0].body["model"] == "llama3.2"
    assert SUMMARY in json.loads(run.stdout)[1]["content"]


def test_bad_model_options_exit_2_with_one_line():
    for args, expected in (
        (["--llm", "gpt-4o"], "PROVIDER:MODEL"),
        (["--llm", "ollama:x", "--llm-url", "localhost:11434"], "http://"),
        (["--llm", "ollama:x", "--fallback", "maybe"], "fallback"),
        (["--llm", "ollama:x", "--temperature", "9"], "temperature"),
        (["--llm", "openai:gpt-4o-mini"], "OPENAI_API_KEY"),
    ):
        run = recap("compact", str(EXAMPLE), *args)
        assert run.returncode == 2, (args, run.stderr)
        assert expected in run.stderr, (args, run.stderr)
        assert run.stdout == ""
