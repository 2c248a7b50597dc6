"""Several recap processes on one SQLite file: starting together they migrate one at a
time (all succeed), and only one of them serves the file — a second ``recap serve`` or
``recap worker`` is refused with one line, while ``recap migrate`` still works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from benchmarks.processes import serving
from tests.service.processes import free_port, recap_env

ROUNDS, PROCESSES = 3, 4


def _recap(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "recap_memory", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finished(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str]:
    """Its exit code and output; killed (and so failing) when it runs past ``timeout``."""
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output = process.communicate()[0] + f"\n(still running after {timeout:.0f} s)"
    return process.returncode, output


@pytest.mark.slow  # real processes
def test_processes_starting_together_on_a_fresh_file_all_migrate_it(tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        env = recap_env(f"sqlite:///{tmp_path / f'round{round_}' / 'recap.db'}")
        started = [_recap("migrate", env=env) for _ in range(PROCESSES)]
        results = [_finished(p) for p in started]
        failed = [output for code, output in results if code != 0]
        assert not failed, f"round {round_}: {len(failed)} of {PROCESSES} failed:\n{failed[0]}"
        assert all("newest schema" in output for _, output in results)


@pytest.mark.slow  # real processes
def test_one_process_serves_a_sqlite_file_and_others_are_refused(tmp_path: Path) -> None:
    database = tmp_path / "data" / "recap.db"
    env = recap_env(f"sqlite:///{database}")
    with serving(env, tmp_path / "serve.log") as (url, server):
        port = str(free_port())
        for refused in (_recap("serve", "--port", port, env=env), _recap("worker", env=env)):
            code, output = _finished(refused, timeout=30)
            lines = output.strip().splitlines()
            assert code == 2 and len(lines) == 1, output
            assert (
                f"another recap process (pid {server.pid}, recap serve) serves {database}"
                in (lines[0])
            )
            assert "use PostgreSQL" in lines[0]
        code, output = _finished(_recap("migrate", env=env))
        assert code == 0 and "newest schema" in output, output
        assert httpx.get(f"{url}/healthz").status_code == 200
    worker = _recap("worker", env=env)  # the server stopped: the file is free again
    try:
        assert worker.stdout is not None
        assert "compacting due sessions" in worker.stdout.readline()
    finally:
        worker.terminate()
        assert _finished(worker)[0] == 0
