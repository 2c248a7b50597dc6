"""Bad input, fuzzed: the HTTP API from its OpenAPI schema (schemathesis), the ``recap
compact`` parser from generated files (hypothesis). No 5xx, no crash, no partial write."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from benchmarks.fuzz import FuzzReport, fuzz_api, fuzz_compact_parser
from tests.service.conftest import running_app

pytestmark = pytest.mark.slow  # benchmarks' and fuzzers' short runs

SEED = 20_240_611
"""Fixed, so a failure here reproduces; the bench runs unseeded and longer."""


def _found(report: FuzzReport) -> str:
    return f"{report.problems} problem(s) in {report.tried} cases:\n" + "\n".join(report.failures)


async def test_the_api_answers_generated_requests_without_a_server_error(
    database_url: str,
) -> None:
    async for app in running_app(database_url):
        report = await fuzz_api(app.app, examples=10, seed=SEED)
    assert report.tried > 100
    assert report.server_errors == 0, _found(report)
    assert report.failures == [], _found(report)
    assert [s.split(":")[0] for s in report.skipped] == ["GET /sessions/{session_id}/events"]


def test_recap_compact_refuses_generated_files_without_crashing() -> None:
    report = fuzz_compact_parser(examples=120, seed=SEED)
    assert report.tried > 120  # the fixed documents come on top
    assert report.server_errors == 0, _found(report)
    assert report.failures == [], _found(report)


class _Shape(BaseModel):
    n: int


async def test_the_api_fuzzer_reports_a_broken_route(tmp_path: Path) -> None:
    """The fuzzer can fail: a route that raises is a 5xx, one that answers a body its
    schema does not allow is a failure."""
    async for app in running_app(f"sqlite:///{tmp_path / 'recap.db'}"):

        @app.app.get("/broken/{n}")
        async def broken(n: int) -> _Shape:
            if n % 2:
                raise RuntimeError("deliberately broken")
            return _Shape(n=n)

        @app.app.get("/lying", response_model=_Shape)
        async def lying() -> JSONResponse:
            return JSONResponse({"n": "not a number"})

        report = await fuzz_api(
            app.app,
            examples=10,
            seed=SEED,
            operations={"GET /broken/{n}", "GET /lying"},
            probes=False,
        )
    assert report.server_errors > 0, _found(report)
    assert any(f.startswith("GET /broken/") and "-> 500" in f for f in report.failures)
    assert any(f.startswith("GET /lying") and "-> 200" in f for f in report.failures)
