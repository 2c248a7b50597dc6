"""``recap eval``: data sets recognized by content, every strategy as a row, the curve,
JSON and PNG written, bad input refused with a clear error; and the budget it uses."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from recap_memory.counting import Meter
from recap_memory.eval.budget import budget_policy, compact_to_budget, strategy_compactor
from recap_memory.planner import plan_compaction
from recap_memory.summarizers import ExtractiveSummarizer, FoldRequest, HybridSummarizer
from tests.conftest import DATA, assistant, recap, system, tool, user

pytestmark = pytest.mark.data


def test_taubench_rows_curve_json_and_plot(tmp_path: Path):
    out, plot = tmp_path / "tau.json", tmp_path / "tau.png"
    done = recap(
        "eval", str(DATA / "taubench_airline_dev.json"), "--limit", "6",
        "--strategy", "extractive", "--strategy", "mask", "--strategy", "hybrid",
        "--out", str(out), "--plot", str(plot),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert figures["dataset"] == "taubench" and figures["budget"] == 0.3
    assert set(figures["strategies"]) == {"extractive", "mask", "hybrid"}
    assert figures["strategies"]["extractive"]["valid_histories"] == 1.0
    assert [p["budget"] for p in figures["curve"]["extractive"]] == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert "whole trajectory" in figures["references"]
    assert figures["target"]["floor"] == 0.70
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert "id_value_recall vs budget" in done.stdout


def test_locomo_json_names_token_recall_and_exact_per_category(tmp_path: Path):
    out = tmp_path / "locomo.json"
    done = recap(
        "eval", str(DATA / "locomo_dev.json"), "--limit", "1", "--strategy", "extractive",
        "--no-curve", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    row = json.loads(out.read_text())["strategies"]["extractive"]
    assert {"token_recall", "exact"} <= row.keys()
    for category in ("multi-hop", "temporal", "open-domain", "single-hop"):
        assert {"token_recall", "exact"} <= row["by_category"][category].keys()
    assert set(row["by_evidence"]) == {"compacted", "kept"}


@pytest.mark.slow
def test_rolling_feeds_turn_by_turn_and_reports_the_floor_beside(tmp_path: Path):
    out = tmp_path / "rolling.json"
    done = recap(
        "eval", str(DATA / "locomo_dev.json"), "--rolling", "--limit", "1",
        "--strategy", "extractive", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert figures["rolling"] and (figures["trigger"], figures["keep"]) == (0.2, 0.07)
    row = figures["strategies"]["extractive"]
    assert row["passes"] >= 5 and row["worst_context_over_trigger"] <= 1.0
    assert row["token_recall"] > row["floor"]["token_recall"]
    assert row["early_token_recall"] > row["floor"]["early_token_recall"]
    assert {t["figure"] for t in figures["targets"]} == {
        "token_recall", "early_token_recall", "readable"
    }  # fmt: skip
    assert "newest" in done.stdout  # the floor row (Rich may wrap its name)


def test_rolling_is_for_long_conversations_and_says_so():
    done = recap("eval", str(DATA / "dialogsum.dev.jsonl"), "--rolling")
    assert done.returncode == 2 and "--rolling" in done.stderr and "LoCoMo" in done.stderr
    bad = recap("eval", str(DATA / "locomo_dev.json"), "--rolling", "--keep", "0.3")
    assert bad.returncode == 2 and "keep < trigger" in bad.stderr


def test_dialogsum_has_rouge_and_no_mask_row(tmp_path: Path):
    out = tmp_path / "ds.json"
    done = recap(
        "eval", str(DATA / "dialogsum.dev.jsonl"), "--limit", "20", "--no-curve",
        "--strategy", "extractive", "--strategy", "mask", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert set(figures["strategies"]) == {"extractive"}
    assert 0 < figures["strategies"]["extractive"]["rougeL"] < 1


@pytest.mark.parametrize(
    ("args", "content", "message"),
    [
        ((), '{"a": 1}', "not a data set recap evaluates"),
        ((), "[1, 2", "not JSON"),
        (("--budget", "1.5"), "[]", "--budget is a share"),
        (("--strategy", "magic"), "[]", "unknown strategy 'magic'"),
        (("--no-curve", "--plot", "x.png"), "[]", "--plot draws the curve"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(tmp_path: Path, args, content, message):
    path = tmp_path / "data.json"
    path.write_text(content)
    done = recap("eval", str(path), *args)
    assert done.returncode == 2
    assert message in done.stderr


def test_the_summary_gets_the_budget_the_kept_turns_leave():
    history = [system("policy " * 500)]
    for n in range(12):
        history += [user(f"question {n} " + "words " * 40), assistant(f"answer {n} " + "x " * 30)]
    policy = budget_policy(history, 0.3, 0.5)
    meter = Meter()
    room = int(meter.messages(history[1:]).chars * 0.3)
    plan = plan_compaction(history, policy, meter)
    kept = meter.messages(history[plan.cut :]).chars
    assert kept <= policy.keep.value <= room // 2
    assert policy.summary_max.value == room - kept
    out = compact_to_budget(history, strategy_compactor(ExtractiveSummarizer()), 0.3)
    assert out.compacted and out.valid
    assert out.size <= 0.3
    assert out.messages[0].role == "system"  # outside the budget, never folded


def test_hybrid_masks_when_that_fits_and_summarizes_when_not():
    span = [
        user("Look up the order."),
        assistant(None, calls=[("c1", "orders")]),
        tool("c1", "row " * 400, name="orders"),
        assistant("Order 123 shipped."),
    ]
    roomy = asyncio.run(HybridSummarizer().fold(FoldRequest(span, 600)))
    assert roomy.summary is None
    assert [m.role for m in roomy.replacement] == ["user", "assistant", "tool", "assistant"]
    assert "elided" in roomy.replacement[2].text
    tight = asyncio.run(HybridSummarizer().fold(FoldRequest(span, 100)))
    assert tight.summary and len(tight.summary) <= 100


@pytest.mark.slow
def test_rolling_on_taubench_is_one_long_agent_session_with_planted_facts(tmp_path: Path):
    out = tmp_path / "session.json"
    done = recap(
        "eval", str(DATA / "taubench_airline_dev.json"), "--rolling", "--strategy", "extractive",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    for row in ("extractive", "extractive, full log at hand"):
        session = figures["strategies"][row]
        assert session["user_turns"] >= 300 and session["valid_history"]
        assert session["facts_found"] == session["facts"] == 6, session["found"]
    assert all(t["met"] for t in figures["targets"])


@pytest.mark.slow
def test_rolling_through_the_service_scores_the_context_its_api_serves(tmp_path: Path):
    out = tmp_path / "service.json"
    done = recap(
        "eval", str(DATA / "locomo_dev.json"), "--rolling", "--limit", "1", "--strategy",
        "extractive", "--through-service", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["strategies"]
    service = next(row for name, row in rows.items() if name.startswith("service"))
    assert service["passes"] >= 5 and service["questions"] > 100
    assert service["token_recall"] > service["floor"]["token_recall"] + 0.1
    assert (
        abs(service["token_recall"] - rows["extractive, full log at hand"]["token_recall"]) < 0.03
    )
