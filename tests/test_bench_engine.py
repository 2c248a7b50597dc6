"""``python -m benchmarks engine`` at tiny sizes: what the benchmark promises, never a time (the
machine is shared)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.commands import app
from benchmarks.conversations import conversation, split_turns
from benchmarks.engine import Options
from benchmarks.engine.cumulative import SHARES, measure_cumulative
from benchmarks.engine.fake_summaries import SUMMARY_SHARE, write_summary
from benchmarks.engine.scaling import measure_scaling
from recap_memory.counting import Meter
from recap_memory.messages import validate_history
from recap_memory.summarizers.validation import validate_summary
from tests.conftest import DATA

pytestmark = pytest.mark.slow  # benchmarks' and fuzzers' short runs


def test_generated_conversations_are_valid_deterministic_and_near_their_size():
    for chars in (1_000, 10_000, 50_000):
        messages = conversation(chars=chars, seed=3)
        validate_history(messages, allow_pending=False)
        assert 0.8 * chars <= Meter().messages(messages).chars <= chars
        assert messages == conversation(chars=chars, seed=3)
    long = conversation(turns=60, seed=3)
    assert any(m.role == "tool" for m in long) and any(m.tool_calls for m in long)
    turns = split_turns(long)
    assert len(turns) == 60
    assert all(sum(m.role == "user" for m in turn) == 1 for turn in turns)
    assert [m.id for turn in turns for m in turn] == list(range(len(long)))


def test_the_fake_summaries_pass_validation_and_respect_the_cap():
    prompt = "Summarize ... At most 300 characters.\n\nTranscript:\n" + "\n".join(
        f"Tool result (search_logs): ORD-{n} stuck at 2024-01-{n % 28 + 1:02d}" for n in range(50)
    )
    summary = write_summary([{"role": "user", "content": prompt}])
    assert len(summary) <= 300 * SUMMARY_SHARE
    assert "ORD-49" in summary  # the newest facts are kept
    validate_summary(summary, source_chars=len(prompt) - 60, max_chars=300, source=prompt)


def test_recap_chain_stays_near_one_token_per_token_while_resummarizing_all_grows():
    messages = conversation(turns=160, seed=7)
    work = asyncio.run(measure_cumulative("generated", messages, Options()))
    assert work.compactions >= 8
    assert [c.share for c in work.checkpoints] == list(SHARES)
    assert all(c.recap_ratio <= 2 for c in work.checkpoints), work.checkpoints
    assert work.final.recap_ratio > 0.5
    half = next(c for c in work.checkpoints if c.share == 0.5)
    assert work.final.baseline_ratio > half.baseline_ratio
    assert work.growth("baseline") > 1.5 > work.growth("recap")
    assert work.final.baseline_input_tokens > 3 * work.final.recap_input_tokens


def test_scaling_gives_a_row_per_size_against_the_first():
    options = Options(sizes=(1_000, 3_000, 9_000), repeats=1, big_repeats=1, profile=True)
    scaling = asyncio.run(measure_scaling(options))
    assert [r.target_chars for r in scaling.rows] == [1_000, 3_000, 9_000]
    first, *rest = scaling.rows
    assert (first.size_ratio, first.time_ratio, first.exponent) == (1.0, 1.0, None)
    assert all(r.exponent is not None and r.size_ratio > 1 for r in rest)
    assert all(r.median_ms > 0 and r.outcome == "summarized" for r in scaling.rows)
    assert scaling.verdict.startswith(f"growth exponent {scaling.exponent:.2f} (")
    assert scaling.hotspots and all(h.where and h.large_ms >= 0 for h in scaling.hotspots)


def test_bench_engine_prints_the_ratios_and_writes_json(tmp_path: Path):
    out = tmp_path / "engine.json"
    args = ["--sizes", "1k,4k", "--repeats", "1", "--turns", "40", "--no-profile"]
    locomo = ["--locomo", str(DATA / "locomo_dev.json")]
    result = CliRunner().invoke(app, ["engine", *args, *locomo, "--out", str(out)])
    assert result.exit_code == 0, result.output
    for text in ("Engine: one compaction pass", "Summarization work, generated", "Verdict:"):
        assert text in result.output
    assert "growth exponent" in result.output and "re-summarize-all" in result.output

    figures = json.loads(out.read_text())
    assert [r["target_chars"] for r in figures["scaling"]["rows"]] == [1_000, 4_000]
    assert figures["scaling"]["verdict"].startswith("growth exponent")
    assert [c["name"] for c in figures["cumulative"]] == ["generated", "locomo"]
    for work in figures["cumulative"]:
        assert len(work["checkpoints"]) == 4
        assert work["compactions"] > 0 and work["conversation_tokens"] > 0


def test_bad_sizes_are_refused():
    for sizes in ("1k", "10k,1k", "a,b"):
        result = CliRunner().invoke(app, ["engine", "--sizes", sizes])
        assert result.exit_code == 2, result.output
        assert "--sizes" in result.output
