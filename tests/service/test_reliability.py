"""The reliability suite's short run (the full one is `python -m benchmarks reliability`):
2 servers and 3 workers on one PostgreSQL — a private cluster the run starts, so that its
restart fault never touches the machine's — under load and every fault: nothing lost."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from benchmarks import reliability


@pytest.mark.postgres
@pytest.mark.slow
async def test_nothing_is_lost_under_load_and_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    figures = await reliability.run(reliability.Options.short(), fuzz=reliability.fuzz_bad_inputs)
    assert figures.acknowledged > 0 and figures.lost == 0
    assert [f.name for f in figures.faults if f.injected] == [
        "model 500s",
        "model timeouts",
        "SIGKILL a worker mid-compaction",
        "model garbage",
        "PostgreSQL restart",
    ]
    assert all(f.survived for f in figures.faults), figures.faults
    assert all(c.passed for c in figures.checks), [c for c in figures.checks if not c.passed]
    assert figures.compactions > 0
    assert figures.bad_inputs_tried > 0 and figures.bad_input_5xx == 0, figures.bad_input_failures
    assert figures.ok
    assert not list(tmp_path.glob("recap-reliability-*")), "a passed run removes its logs"
