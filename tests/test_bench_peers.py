"""``python -m benchmarks peers``: recap, LangChain's middleware and LangMem behind one model.

A small run on the real data; no figure here is a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import HumanMessage
from langchain_core.messages.utils import get_buffer_string
from typer.testing import CliRunner

from benchmarks import peers
from benchmarks.commands import app
from benchmarks.conversations import parallel_session
from benchmarks.peers.budget import TEMPLATES
from benchmarks.peers.checks import AS_CONVERSATION, AS_MIDDLEWARE, trigger_checks
from benchmarks.peers.engines import ENGINES, ONCE, READS_ALL
from benchmarks.peers.validity import parallel_cases
from recap_memory.adapters.langchain import to_langchain
from recap_memory.integrations.extractive_chat import ExtractiveChatModel
from recap_memory.summarizers.base import transcript
from recap_memory.summarizers.llm import FRESH
from tests.conftest import DATA, assistant, load_data, tool, user

pytestmark = [pytest.mark.data, pytest.mark.slow]

SMALL = peers.Options(
    locomo_samples=1,
    tau_records=8,
    generated=8,
    session_samples=1,
    check_sizes=(10, 100),
    check_samples=2,
)
ROWS = (
    "valid histories, τ-bench",
    "valid histories, parallel calls",
    "LoCoMo token recall at 20%",
    "  … each peer reading all it folds",
    "per-turn call, 10 msgs",
    "per-turn call, 10 msgs · Conversation",
    "per-turn call, 10 msgs · RecapMiddleware",
    "per-turn call, 100 msgs",
    "per-turn call, 100 msgs · Conversation",
    "per-turn call, 100 msgs · RecapMiddleware",
    "LoCoMo rolling recall, whole convs",
    "  … each peer reading all it folds, rolling",
    "summarizer input, whole convs",
    "per-turn growth, 100÷10",
    "per-turn growth, 100÷10 · Conversation",
    "per-turn growth, 100÷10 · RecapMiddleware",
)


@pytest.fixture(scope="module")
def figures() -> peers.PeersFigures:
    return peers.run(load_data("locomo_dev.json"), load_data("taubench_airline_dev.json"), SMALL)


def test_recap_keeps_every_history_valid(figures: peers.PeersFigures) -> None:
    for validity in (figures.taubench["recap"], figures.parallel["recap"]):
        assert validity.rate == 1.0
        assert validity.compacted == validity.histories
        assert validity.errors == 0


def test_recap_is_at_least_as_valid_as_each_peer(figures: peers.PeersFigures) -> None:
    for validity in (figures.taubench, figures.parallel):
        assert all(validity["recap"].rate >= v.rate for v in validity.values())


def test_the_generated_cut_splits_a_parallel_call_group() -> None:
    for seed in range(20):
        case = parallel_session(seed)
        first_kept = case.messages[case.cut]
        assert first_kept.role == "tool"
        call = next(m for m in reversed(case.messages[: case.cut]) if m.tool_calls)
        ids = [c.id for c in call.tool_calls]
        assert len(ids) >= 2 and first_kept.tool_call_id in ids
        assert case.messages[case.cut - 1].role == "tool"  # a sibling result before the cut


def test_every_engine_calls_the_shared_model_with_the_same_cap(
    figures: peers.PeersFigures,
) -> None:
    for validity in (figures.taubench, figures.parallel):
        caps = {v.caps for v in validity.values()}
        assert len(caps) == 1
        assert all(v.model_calls > 0 for v in validity.values())
    assert all(r.model_calls > 0 for r in figures.locomo.values())
    assert all(s.model_calls > 0 for s in figures.sessions.values())


def test_one_case_through_all_three_engines_reaches_each_model() -> None:
    messages, budget = parallel_cases(1, seed=3)[0]
    for engine in ENGINES:
        model = budget.model()
        ONCE[engine](messages, budget, model)
        assert model.max_chars == budget.summary_chars
        assert model.calls, engine
        assert all(0 < c.output_chars <= c.max_chars <= budget.summary_chars for c in model.calls)


def test_recap_recalls_at_least_as_much_on_locomo_as_peers_at_their_defaults(
    figures: peers.PeersFigures,
) -> None:
    recap = figures.locomo["recap"]
    defaults = [figures.locomo[e] for e in ENGINES]
    assert all(recap.token_recall >= r.token_recall for r in defaults)
    for recall in figures.locomo.values():  # the same budget for all: about 20% of the text
        assert recall.size == pytest.approx(0.2, abs=0.03)
    assert recap.read_share > 0.9  # recap's summarizer read everything it folded


def test_peers_reading_all_they_fold_are_measured_too_and_tie(figures: peers.PeersFigures) -> None:
    """Honest peers: configured at their best, LangChain and LangMem read all they fold
    and come within a point of recap (the same summarizer behind all three)."""
    recap = figures.locomo["recap"].token_recall
    for name in READS_ALL.values():
        best = figures.locomo[name]
        assert best.read_share > 0.9 and abs(best.token_recall - recap) < 0.02


def test_recap_rolled_turn_by_turn_keeps_at_least_what_peers_keep_at_their_defaults(
    figures: peers.PeersFigures,
) -> None:
    """Rolling recall: whole conversations fed one message per turn, each engine folding
    as often as its policy says; scored on the context after the last turn."""
    recap = figures.sessions["recap"]
    assert recap.folds > 1 and 0 < recap.token_recall <= 1
    assert all(recap.token_recall >= figures.sessions[e].token_recall for e in ENGINES)
    assert set(figures.sessions) == {*ENGINES, *READS_ALL.values()}


def test_the_trigger_checks_find_nothing_due() -> None:
    checks = trigger_checks(50)
    assert checks["recap"]().report.reason == "under the trigger threshold"
    assert checks[AS_CONVERSATION]().report.reason == "under the trigger threshold"
    assert checks[AS_MIDDLEWARE]() is None
    assert checks["langchain"]() is None
    result: Any = checks["langmem"]()
    assert result.running_summary is None


def test_the_figures_have_every_row_as_json(figures: peers.PeersFigures) -> None:
    data = json.loads(json.dumps(figures.as_dict()))
    rows = {row["name"]: row for row in data["rows"]}
    assert set(rows) == set(ROWS)
    for row in rows.values():
        assert set(row["values"]) == set(ENGINES)
        assert set(row["ratios"]) == {"langchain", "langmem"}
    assert set(data["locomo"]) == {*ENGINES, *READS_ALL.values()}


def test_the_command_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "peers.json"
    result = CliRunner().invoke(
        app,
        [
            "peers", "--data-dir", str(DATA), "--locomo-samples", "1",
            "--tau-records", "3", "--generated", "3", "--session-samples", "1",
            "--check-sizes", "10,20", "--check-samples", "1", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "÷ langmem" in result.output
    assert len(json.loads(out.read_text())["rows"]) == len(ROWS)


# the shared model ---------------------------------------------------------------------------


def test_the_model_summarizes_the_same_text_whatever_the_prompt_format() -> None:
    messages = [
        user("Caroline: I joined the LGBTQ support group on 7 May 2023. It was powerful."),
        assistant("Let me look that up.", calls=[("c1", "lookup"), ("c2", "lookup")]),
        tool("c1", '{"group": "Pride Center", "members": 42}'),
        tool("c2", '{"city": "Boston"}'),
        assistant("Melanie: I painted a sunrise over the lake in 2022."),
    ]
    lc = [to_langchain(m.replace(id=str(n))) for n, m in enumerate(messages)]
    model = ExtractiveChatModel(max_chars=400, templates=TEMPLATES)
    recap_prompt = FRESH.format(transcript=transcript(messages), max_chars=400)
    xml = DEFAULT_SUMMARY_PROMPT.format(messages=get_buffer_string(lc, format="xml")).rstrip()
    answers = [
        model.invoke(recap_prompt).content,
        model.invoke(xml).content,
        model.invoke([*lc, HumanMessage("Create a summary of the conversation above:")]).content,
    ]
    assert answers[0] == answers[1] == answers[2]
    assert "Boston" in answers[0] and "Create" not in answers[0]
    assert len({c.text_chars for c in model.calls}) == 1


def test_the_model_honours_a_smaller_cap_in_the_prompt_and_reports_usage() -> None:
    model = ExtractiveChatModel(max_chars=1000)
    text = "\n".join(f"User: fact {n} about the Zephyr project launch." for n in range(60))
    reply = model.invoke(FRESH.format(transcript=text, max_chars=120))
    assert 0 < len(str(reply.content)) <= 120
    assert model.calls[0].max_chars == 120
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] == model.calls[0].input_tokens == model.input_tokens


def test_the_model_refuses_a_prompt_over_its_window() -> None:
    model = ExtractiveChatModel(max_chars=100, context_window=50)
    assert model.profile == {"max_input_tokens": 50}
    with pytest.raises(ContextOverflowError):
        model.invoke("word " * 400)


@pytest.mark.parametrize(
    ("locomo_text", "message"),
    [("[1,", "cannot read it as JSON"), ("[]", "not the locomo data")],
)
def test_bad_data_is_refused_with_a_clear_error(tmp_path: Path, locomo_text: str, message: str):
    (tmp_path / "locomo_dev.json").write_text(locomo_text)
    (tmp_path / "taubench_airline_dev.json").write_text("[]")
    result = CliRunner().invoke(app, ["peers", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert message in result.output
