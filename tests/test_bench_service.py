"""``python -m benchmarks service`` with tiny options: the figures are printed and written, and
positive. Their speed is never asserted (the machine is shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.commands import app

pytestmark = pytest.mark.slow  # benchmarks' and fuzzers' short runs

TINY = ["--large", "2000", "--small", "10", "--samples", "20"]
TINY_HTTP = ["--requests", "100", "--clients", "4", "--rounds", "2"]


def test_bench_service_prints_and_writes_positive_figures(tmp_path: Path):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["service", *TINY, *TINY_HTTP, "--out", str(out)])
    assert result.exit_code == 0, result.output
    for text in ("Gate cost", "target < 1.5", "GET /healthz", "append ÷ no-op"):
        assert text in result.output

    figures = json.loads(out.read_text())
    assert figures["database"] == "sqlite"
    gate = figures["gate"]
    assert (gate["small_messages"], gate["large_messages"]) == (10, 2000)
    assert gate["small"]["samples"] == gate["large"]["samples"] == 20
    assert gate["passed"] in (True, False)
    http = figures["http"]
    assert http["noop"]["requests"] == http["append"]["requests"] == 100
    assert len(http["round_ratios"]) == 2
    positive = [
        gate["ratio"],
        http["ratio"],
        *(gate[s][q] for s in ("small", "large") for q in ("median_ms", "p90_ms", "p99_ms")),
        *(http[e]["per_second"] for e in ("noop", "append")),
        *(http[e]["latency"][q] for e in ("noop", "append") for q in ("median_ms", "p99_ms")),
    ]
    assert all(value > 0 for value in positive), figures


def test_small_must_be_below_large():
    result = CliRunner().invoke(app, ["service", "--small", "10", "--large", "10"])
    assert result.exit_code == 2
    assert "--small must be below --large" in result.output
