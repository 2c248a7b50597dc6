"""The benchmarks' process logs: a run's temporary log folder goes away when the run
passes, and stays (its path printed) when it fails."""

from __future__ import annotations

import shutil

import pytest

from benchmarks.processes import LogFolder


def test_a_passed_run_leaves_no_log_folder_behind() -> None:
    logs = LogFolder("recap-test-")
    (logs.path / "01-serve.log").write_text("recap service ready")
    logs.passed = True
    logs.close()
    assert not logs.path.exists()


def test_a_failed_run_keeps_its_logs_and_says_where(capsys: pytest.CaptureFixture[str]) -> None:
    logs = LogFolder("recap-test-")
    try:
        (logs.path / "01-serve.log").write_text("Traceback ...")
        logs.close()  # the run never said it passed: an exception, or failed checks
        assert (logs.path / "01-serve.log").read_text() == "Traceback ..."
        assert f"logs are kept in {logs.path}" in capsys.readouterr().err
    finally:
        shutil.rmtree(logs.path, ignore_errors=True)
