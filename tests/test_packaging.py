"""What a new user meets first: the slim core loads no server module, one source of
settings with one-line errors naming the variable set, ``--version`` and ``-h``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recap_memory import __version__
from recap_memory.policy import DEFAULT_KEEP_CHARS, DEFAULT_TRIGGER_CHARS, Policy
from recap_memory.settings import SummarizationSettings
from tests.conftest import CLEAN_ENV, ROOT, recap

EXAMPLE = ROOT / "examples" / "incident_session.json"
SERVER_MODULES = (
    "fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "aiosqlite", "psycopg",
    "prometheus_client", "recap_memory.service", "recap_memory.store", "recap_memory.web",
)  # fmt: skip
LOADED = """
import json, sys
{body}
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {top} or m.startswith({prefixes}))
print(json.dumps(heavy))
"""


def _loaded_after(body: str, tmp_path: Path) -> list[str]:
    """The server modules a fresh interpreter holds after running ``body``."""
    script = LOADED.format(
        body=body,
        top={m for m in SERVER_MODULES if "." not in m},
        prefixes=tuple(m for m in SERVER_MODULES if "." in m),
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
        env=CLEAN_ENV, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return list(json.loads(run.stdout.splitlines()[-1]))


def test_importing_recap_memory_loads_no_server_module(tmp_path: Path):
    assert _loaded_after("import recap_memory, recap_memory.cli", tmp_path) == []


def test_the_client_loads_no_server_module(tmp_path: Path):
    """``recap_memory.client`` works with the core install: httpx and pydantic only."""
    body = "from recap_memory.client import AsyncClient, Client; Client().close()"
    assert _loaded_after(body, tmp_path) == []


def test_recap_compact_loads_no_server_module(tmp_path: Path):
    body = f"""
from typer.testing import CliRunner
from recap_memory.cli import app
out = {str(tmp_path / "out.json")!r}
result = CliRunner().invoke(app, ["compact", {str(EXAMPLE)!r}, "--threshold-chars", "12000",
                                  "--keep-chars", "4000", "-o", out])
assert result.exit_code == 0, result.output
"""
    assert _loaded_after(body, tmp_path) == []
    assert json.loads((tmp_path / "out.json").read_text())[1]["content"].startswith("[recap")


def test_the_sanity_check_catches_a_server_import(tmp_path: Path):
    """The tests above can fail: importing the service is seen."""
    assert "fastapi" in _loaded_after("import recap_memory.service", tmp_path)


def test_version_and_short_help():
    version = recap("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"recap-memory {__version__}"
    short = recap("-h")
    assert short.returncode == 0 and "compact" in short.stdout and "serve" in short.stdout
    assert recap("compact", "-h").returncode == 0


def test_the_defaults_are_defined_once():
    settings = SummarizationSettings()
    policy = Policy()
    assert settings.threshold_chars == DEFAULT_TRIGGER_CHARS == policy.trigger.chars
    assert settings.keep_chars == DEFAULT_KEEP_CHARS == policy.keep.chars


def test_a_bad_value_is_one_line_naming_the_variable_set_and_help_still_works():
    env = {"SUMMARIZATION_KEEP_CHARS": "abc"}
    helped = recap("--help", env=env)
    assert helped.returncode == 0 and "Traceback" not in helped.stderr
    run = recap("compact", str(EXAMPLE), env=env)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert "SUMMARIZATION_KEEP_CHARS='abc'" in run.stderr and "RECAP_KEEP_CHARS" not in run.stderr


def test_recap_compact_reads_the_summarization_variables(tmp_path: Path):
    """Design A's variables set the trigger and keep of ``recap compact`` as of ``serve``."""
    unchanged = recap("compact", str(EXAMPLE))
    assert json.loads(unchanged.stdout) == json.loads(EXAMPLE.read_text())  # under 60,000
    env = {"SUMMARIZATION_THRESHOLD_CHARS": "12000", "SUMMARIZATION_KEEP_CHARS": "4000"}
    run = recap("compact", str(EXAMPLE), env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)[1]["content"].startswith("[recap summary")
    flags_win = recap("compact", str(EXAMPLE), "--threshold-chars", "500000", env=env)
    assert json.loads(flags_win.stdout) == json.loads(EXAMPLE.read_text())


@pytest.mark.parametrize("strategy", ["extractive", "mask", "hybrid"])
def test_every_strategy_is_selectable_by_environment(strategy: str, tmp_path: Path):
    report = tmp_path / "report.json"
    env = {
        "RECAP_STRATEGY": strategy,
        "SUMMARIZATION_THRESHOLD_CHARS": "12000",
        "SUMMARIZATION_KEEP_CHARS": "4000",
    }
    run = recap("compact", str(EXAMPLE), "--report", str(report), env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(report.read_text())["strategy"] == strategy


def test_an_unknown_strategy_in_the_environment_is_one_line():
    run = recap("compact", str(EXAMPLE), env={"RECAP_STRATEGY": "magic"})
    assert run.returncode == 2 and "RECAP_STRATEGY='magic'" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.slow
def test_the_slim_install_compacts_and_serve_names_the_extra(tmp_path: Path):
    """``pip install recap-memory`` in a new virtual environment: the engine,
    ``recap compact`` and the client work; ``recap serve`` says in one line which extra it needs."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr
    listed = subprocess.run(
        [str(venv / "bin" / "pip"), "list", "--format", "json"], capture_output=True, text=True
    )
    installed = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "recap-memory" in installed
    assert not installed & {"fastapi", "uvicorn", "sqlalchemy", "alembic", "psycopg"}
    recap_bin = str(venv / "bin" / "recap")
    out = tmp_path / "out.json"
    compact = subprocess.run(
        [recap_bin, "compact", str(EXAMPLE), "--threshold-chars", "12000", "--keep-chars",
         "4000", "-o", str(out)],
        capture_output=True, text=True, env=CLEAN_ENV, timeout=120,
    )  # fmt: skip
    assert compact.returncode == 0, compact.stderr
    assert json.loads(out.read_text())[1]["content"].startswith("[recap summary")
    client = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "from recap_memory.client import Client"],
        capture_output=True, text=True, env=CLEAN_ENV, timeout=120,
    )  # fmt: skip
    assert client.returncode == 0, client.stderr
    serve = subprocess.run(
        [recap_bin, "serve"], capture_output=True, text=True, env=CLEAN_ENV, timeout=60
    )
    assert serve.returncode == 2
    assert "recap-memory[server]" in serve.stderr and "Traceback" not in serve.stderr


def test_a_bad_log_format_is_one_line():
    run = recap("compact", str(EXAMPLE), env={"RECAP_LOG_FORMAT": "xml"})
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "RECAP_LOG_FORMAT='xml'" in run.stderr and "text or json" in run.stderr
