"""The reliability suite's short runs (the full one is `python -m benchmarks reliability`):
2 servers and 3 workers on one PostgreSQL — a private cluster the run starts, so that its
restart fault never touches the machine's — and the embedded deployment (one server on a
SQLite file, killed mid-pass and restarted), each under load and every fault, checked
against what the clients were told."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from benchmarks import reliability

MODEL_FAULTS = [
    "model 500s",
    "model timeouts",
    "summary refusals",
    "chat-template tokens",
    "reasoning only",
    "model garbage",
]


async def _short_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: reliability.Database
) -> reliability.Figures:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    figures = await reliability.run(
        reliability.Options.short(database=database), fuzz=reliability.fuzz_bad_inputs
    )
    assert all(c.passed for c in figures.checks), [c for c in figures.checks if not c.passed]
    assert figures.acknowledged > 0 and figures.unresolved == 0
    assert all(f.survived for f in figures.faults), figures.faults
    assert figures.compactions > 0
    assert figures.bad_inputs_tried > 0 and figures.bad_input_5xx == 0, figures.bad_input_failures
    assert figures.ok
    assert not list(tmp_path.glob("recap-reliability-*")), "a passed run removes its logs"
    return figures


@pytest.mark.postgres
@pytest.mark.slow
async def test_postgres_loses_nothing_under_load_and_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = await _short_run(tmp_path, monkeypatch, "postgres")
    assert [f.name for f in figures.faults if f.injected] == [
        *MODEL_FAULTS,
        "SIGKILL mid-pass",
        "PostgreSQL restart",
    ]


@pytest.mark.slow
async def test_sqlite_loses_nothing_under_load_and_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = await _short_run(tmp_path, monkeypatch, "sqlite")
    assert (figures.servers, figures.workers) == (1, 0)
    assert [f.name for f in figures.faults if f.injected] == [*MODEL_FAULTS, "SIGKILL mid-pass"]
