"""``recap compact`` and ``recap eval`` as a user runs them: a real process, real files."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import ROOT, recap

EXAMPLE = ROOT / "examples" / "incident_session.json"
SMALL = ["--threshold-chars", "12000", "--keep-chars", "4000"]


def test_compact_writes_history_and_report(tmp_path: Path):
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    run = recap("compact", str(EXAMPLE), *SMALL, "-o", str(out), "--report", str(report))
    assert run.returncode == 0, run.stderr
    original = json.loads(EXAMPLE.read_text())
    compacted = json.loads(out.read_text())
    figures = json.loads(report.read_text())
    assert figures["compacted"] is True
    assert compacted[0] == original[0]  # system prompt unchanged, first
    assert compacted[1]["role"] == "user" and compacted[1]["content"].startswith("[recap summary")
    assert compacted[-3:] == original[-3:]  # the newest turn verbatim
    for key in ("messages_removed", "chars_removed", "summary_chars", "covered", "elapsed_ms"):
        assert key in figures
    first, last = figures["covered"]  # input indices; the header numbers messages from 1
    assert f"messages {first + 1}–{last + 1}," in compacted[1]["content"]


def test_compact_reads_stdin_and_jsonl(tmp_path: Path):
    lines = "\n".join(json.dumps(m) for m in json.loads(EXAMPLE.read_text()))
    run = recap("compact", "-", *SMALL, stdin=lines.encode())
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)[1]["content"].startswith("[recap summary")


def test_under_the_threshold_the_output_equals_the_input():
    run = recap("compact", str(EXAMPLE), "--report", "/dev/null")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == json.loads(EXAMPLE.read_text())
    # written through, not replaced by a file (output is otherwise renamed into place)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_directory_of_inputs_goes_to_an_output_directory(tmp_path: Path):
    source = tmp_path / "in"
    source.mkdir()
    for name in ("a", "b"):
        (source / f"{name}.json").write_text(EXAMPLE.read_text())
    run = recap(
        "compact",
        str(source),
        *SMALL,
        "-o",
        str(tmp_path / "out"),
        "--report",
        str(tmp_path / "r.json"),
    )
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.json", "b.json"]
    assert [r["file"] for r in json.loads((tmp_path / "r.json").read_text())] == [
        str(source / "a.json"),
        str(source / "b.json"),
    ]


BAD = {
    "not_json": (b"{not json", "not valid JSON"),
    "not_utf8": (b'[{"role": "user", "content": "caf\xe9"}]', "not UTF-8"),
    "unknown_role": (b'[{"role": "robot", "content": "x"}]', "unknown role 'robot'"),
    "orphan_tool": (
        b'[{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c1", '
        b'"content": "r"}]',
        "has no assistant tool call",
    ),
    "too_deep": (b"[" * 100_000, "nested too deeply"),  # found by the parser fuzzer
    "lone_surrogate": (b'[{"role": "user", "content": "\\ud800"}]', "lone surrogate"),  # idem
}


@pytest.mark.parametrize("case", BAD)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path: Path, case: str):
    data, fragment = BAD[case]
    source, out = tmp_path / "in.json", tmp_path / "out.json"
    source.write_bytes(data)
    run = recap("compact", str(source), "-o", str(out))
    assert run.returncode == 2
    assert fragment in run.stderr and str(source) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert not out.exists() and run.stdout == ""


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (["--keep-chars", "-5"], "--keep-chars must be a positive number"),
        (["--threshold-chars", "1000", "--keep-chars", "1000"], "must be below the trigger"),
        (["--strategy", "poetry"], "unknown strategy 'poetry'"),
    ],
)
def test_bad_settings_exit_2(tmp_path: Path, flags: list[str], fragment: str):
    run = recap("compact", str(EXAMPLE), *flags, "-o", str(tmp_path / "out.json"))
    assert run.returncode == 2
    assert fragment in run.stderr
    assert not (tmp_path / "out.json").exists()
