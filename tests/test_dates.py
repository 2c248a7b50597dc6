"""Relative dates pinned to the date of their passage, so a summary read months later
still says when things happened."""

from __future__ import annotations

import datetime as dt

import pytest

from recap_memory.summarizers import ExtractiveSummarizer, FoldRequest
from recap_memory.summarizers.dates import parse_date, pinned
from tests.conftest import assistant, user

DAY = dt.date(2023, 5, 8)


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("[Session of 1:56 pm on 8 May, 2023]", DAY),
        ("on May 8, 2023 we met", DAY),
        ("logged 2023-05-08T10:00Z", DAY),
        ("no date here", None),
        ("31 February, 2023", None),
    ],
)
def test_calendar_dates_are_read_in_the_usual_forms(text: str, date: dt.date | None):
    assert parse_date(text) == date


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went there yesterday.", "I went there yesterday (7 May 2023)."),
        ("Two days ago it rained.", "Two days ago (6 May 2023) it rained."),
        ("Last week I ran.", "Last week (the week before 8 May 2023) I ran."),
        ("I read it last year.", "I read it last year (2022)."),
        ("We move next month.", "We move next month (June 2023)."),
        ("yesterday (7 May 2023) again", "yesterday (7 May 2023) again"),
    ],
)
def test_a_relative_date_gets_the_date_it_meant(text: str, expected: str):
    assert pinned(text, DAY) == expected


def test_the_digest_groups_by_day_and_pins_relative_dates():
    span = [
        user("[Session of 1:56 pm on 8 May, 2023]\nCaroline: I went to a support group yesterday."),
        assistant("Melanie: Last year I painted a sunrise by the lake."),
    ]
    summary = ExtractiveSummarizer().summarize(FoldRequest(span, 400))
    assert summary.splitlines() == [
        "[8 May 2023]",
        "- Caroline: I went to a support group yesterday (7 May 2023).",
        "- Melanie: Last year (2022) I painted a sunrise by the lake.",
    ]
