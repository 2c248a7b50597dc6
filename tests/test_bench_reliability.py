"""The reliability run's checks can fail: each verifier, fed a crafted ledger and record,
passes on the good one and fails on a bad one (a message missing, doubled, out of order,
refused but written; an incomplete context; a stored refusal). No processes."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from benchmarks.ledger import (
    Attempt,
    Check,
    Ledger,
    Request,
    Sent,
    check_acknowledged,
    check_chains,
    check_contexts,
    check_no_strangers,
    check_order,
    check_refused_absent,
    check_summary_texts,
    marker,
)
from benchmarks.reliability import Fault, Figures, Kill, ModelFault, _fault_checks
from recap_memory.testing.model_server import ModelServer, Reply, Status

S = "aaaaaaaa-0000-0000-0000-000000000001"
TAG = "aaaaaaaa0000"
GOOD = "The user asked where invoice 3 is; it was paid on day 3."


def sent(n: int, role: str = "user") -> Sent:
    return Sent(marker(TAG, n), f"{TAG}-{n}", role)


def stored(n: int, record_id: int, role: str = "user", **extra: Any) -> dict[str, Any]:
    return {
        "role": role,
        "content": f"{marker(TAG, n)} text {n}",
        "client_id": f"{TAG}-{n}",
        "id": record_id,
        **extra,
    }


def ledger() -> Ledger:
    """Three requests: two acknowledged (ids 1-2, 3-4), one refused (markers 4 and 5)."""
    return Ledger(
        [
            Request(S, [sent(0), sent(1, "assistant")], [Attempt("acknowledged", 201, ids=[1, 2])]),
            Request(
                S,
                [sent(2), sent(3, "assistant")],
                [
                    Attempt("unknown", 503, "outcome_unknown"),
                    Attempt("acknowledged", 201, ids=[3, 4], replayed=True),
                ],
            ),
            Request(
                S,
                [sent(4), sent(5, "assistant")],
                [Attempt("refused", 503, "database_unavailable")],
            ),
        ]
    )


def record() -> dict[str, list[dict[str, Any]]]:
    return {
        S: [
            stored(0, 1),
            stored(1, 2, "assistant"),
            stored(2, 3),
            stored(3, 4, "assistant"),
        ]
    }


def test_the_ledger_sorts_requests_by_outcome() -> None:
    book = ledger()
    assert [r.outcome for r in book.requests] == ["acknowledged", "acknowledged", "refused"]
    unsure = Request(
        S, [sent(9)], [Attempt("refused", 503), Attempt("timeout"), Attempt("refused", 503)]
    )
    assert unsure.outcome == "unresolved"  # the timeout may have written it


@pytest.mark.parametrize(
    "check", [check_acknowledged, check_refused_absent, check_no_strangers, check_order]
)
def test_the_ledger_checks_pass_on_a_faithful_record(check: Any) -> None:
    result = check(ledger(), record())
    assert result.passed, result


def test_a_missing_acknowledged_message_fails() -> None:
    bad = record()
    del bad[S][2]
    result = check_acknowledged(ledger(), bad)
    assert not result.passed and "1 missing" in result.detail


def test_a_duplicated_message_fails() -> None:
    bad = record()
    bad[S].append({**stored(2, 5)})
    assert not check_acknowledged(ledger(), bad).passed
    strangers = check_no_strangers(ledger(), bad)
    assert not strangers.passed and "1 twice" in strangers.detail
    assert not check_order(ledger(), bad).passed


def test_messages_out_of_order_fail_though_ids_ascend() -> None:
    bad = record()
    # the same messages under ascending ids, the second request's stored before the first's
    bad[S] = [stored(2, 1), stored(3, 2, "assistant"), stored(0, 3), stored(1, 4, "assistant")]
    result = check_order(ledger(), bad)
    assert not result.passed and "1 differ" in result.detail
    assert not check_acknowledged(ledger(), bad).passed  # the 201s named other ids


def test_a_refused_message_in_the_record_fails() -> None:
    bad = record()
    bad[S].append(stored(4, 5))
    result = check_refused_absent(ledger(), bad)
    assert not result.passed and "1 found" in result.detail
    assert not check_order(ledger(), bad).passed


def test_a_message_no_client_sent_fails() -> None:
    bad = record()
    bad[S].append({"role": "user", "content": "no marker", "id": 9})
    assert not check_no_strangers(ledger(), bad).passed


def test_a_message_under_another_client_id_fails() -> None:
    bad = record()
    bad[S][0]["client_id"] = "someone-else"
    result = check_acknowledged(ledger(), bad)
    assert not result.passed and "1 under other ids" in result.detail


# contexts -----------------------------------------------------------------------------------


def chat() -> list[dict[str, Any]]:
    """System, a pinned user message, a tool call and its result, then plain turns."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return [
        stored(0, 1, "system"),
        stored(1, 2, "user", pinned=True),
        stored(2, 3, "assistant", tool_calls=[call]),
        stored(3, 4, "tool", tool_call_id="c1"),
        stored(4, 5, "assistant"),
        stored(5, 6, "user"),
        stored(6, 7, "assistant"),
    ]


def summary_row(first: int, last: int, carried: list[int], text: str = GOOD) -> dict[str, Any]:
    return {
        "id": 1,
        "first_message_id": first,
        "last_message_id": last,
        "carried": carried,
        "content": text,
        "superseded_by": None,
    }


def plain(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k not in ("id", "pinned", "client_id")}


def compacted_context(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The context the service should serve after summarizing through id 5, carrying 2."""
    summary = {"role": "user", "content": f"[recap summary of messages 2–5]\n{GOOD}"}
    kept = [messages[0], summary, messages[1], messages[5], messages[6]]
    return {
        "messages": [m if m is summary else plain(m) for m in kept],
        "ids": [1, None, 2, 6, 7],
        "summarized_through": 5,
    }


def test_a_complete_context_passes() -> None:
    messages = chat()
    contexts = {S: compacted_context(messages)}
    summaries = {S: [summary_row(2, 5, [2])]}
    result = check_contexts({S: messages}, contexts, summaries)
    assert result.passed, result
    uncompacted = {"messages": [plain(m) for m in messages], "ids": list(range(1, 8))}
    assert check_contexts({S: messages}, {S: uncompacted}, {S: []}).passed


@pytest.mark.parametrize(
    "damage",
    [
        "drop the tail's last message",
        "drop a carried message",
        "change a message",
        "tool result without its call",
        "no summary message",
    ],
)
def test_an_incomplete_context_fails(damage: str) -> None:
    messages = chat()
    context = compacted_context(messages)
    broken = copy.deepcopy(context)
    if damage == "drop the tail's last message":
        del broken["messages"][-1], broken["ids"][-1]
    elif damage == "drop a carried message":
        del broken["messages"][2], broken["ids"][2]
    elif damage == "change a message":
        broken["messages"][3]["content"] += " (edited)"
    elif damage == "tool result without its call":
        # a context that cut between a call and its result: both in the record, only the
        # result after summarized-through
        broken = {
            "messages": [plain(messages[0]), context["messages"][1], plain(messages[3])],
            "ids": [1, None, 4],
            "summarized_through": 3,
        }
    else:
        del broken["messages"][1], broken["ids"][1]
    summaries = {S: [summary_row(2, 5, [2])]}
    result = check_contexts({S: messages}, {S: broken}, summaries)
    assert not result.passed, damage


def test_a_folded_pinned_message_fails() -> None:
    messages = chat()
    context = compacted_context(messages)
    del context["messages"][2], context["ids"][2]
    result = check_contexts({S: messages}, {S: context}, {S: [summary_row(2, 5, [])]})
    assert not result.passed and "pinned message 2 folded" in result.detail


def test_overlapping_or_gapped_summary_ranges_fail() -> None:
    messages = chat()
    assert check_chains({S: messages}, {S: [summary_row(2, 5, [2])]}).passed
    overlap = [summary_row(2, 5, []), {**summary_row(4, 6, []), "id": 2}]
    assert not check_chains({S: messages}, {S: overlap}).passed
    gap = [summary_row(3, 5, [])]  # message 2 is below the chain's end and in no range
    assert not check_chains({S: messages}, {S: gap}).passed


# summaries and faults -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, but I can't summarize this conversation.",
        "<|im_start|>assistant\nThe user asked about invoices.<|im_end|>",
        "<think>The user wants a summary.</think>",
    ],
)
def test_a_stored_bad_summary_fails(text: str) -> None:
    good = check_summary_texts({S: [summary_row(2, 5, [])]}, [GOOD], ["I'm sorry", "<|im_end|>"])
    assert good.passed, good
    result = check_summary_texts({S: [summary_row(2, 5, [], text)]}, [GOOD], ["I'm sorry"])
    assert not result.passed, result


def test_a_summary_the_model_never_gave_fails() -> None:
    result = check_summary_texts(
        {S: [summary_row(2, 5, [], "Invoices were discussed.")]}, [GOOD], []
    )
    assert not result.passed and "1 not a text the model answered" in result.detail


def test_a_fault_counts_only_once_consumed() -> None:
    with ModelServer(Reply(GOOD)) as model:
        model.then(Status(500))
        httpx.post(f"{model.url}/v1/chat/completions", json={"model": "m", "messages": []})
        model.then(Status(502), Status(502))  # queued, never taken
        queued = [
            ModelFault("500s", Status(500), 1, ""),
            ModelFault("502s", Status(502), 2, ""),
        ]
        kill = Kill(Fault("SIGKILL mid-pass", queued=1, consumed=1), session=S, recovered_s=1.0)
        faults, checks = _fault_checks(model, queued, kill, None)
    assert [(f.name, f.consumed, f.injected) for f in faults] == [
        ("500s", 1, True),
        ("502s", 0, False),
        ("SIGKILL mid-pass", 1, True),
    ]
    consumed = checks[0]
    assert not consumed.passed
    assert "queued but never consumed (not counted): 502s 2" in consumed.detail


def test_a_kill_that_was_not_waited_out_passes_and_one_never_finished_fails() -> None:
    with ModelServer() as model:
        done = Kill(Fault("SIGKILL mid-pass", 1, 1), session=S, recovered_s=2.0, must_reclaim_s=60)
        slow = Kill(Fault("SIGKILL mid-pass", 1, 1), session=S, recovered_s=61.0, must_reclaim_s=60)
        never = Kill(Fault("SIGKILL mid-pass", 1, 1), session=S)
        assert _fault_checks(model, [], done, None)[1][1].passed
        assert not _fault_checks(model, [], slow, None)[1][1].passed
        assert not _fault_checks(model, [], never, None)[1][1].passed


def test_figures_name_the_failing_checks() -> None:
    figures = Figures(checks=[Check("a", True), Check("order", False)])
    assert not figures.ok and figures.failed == ["order"]
