"""Relative dates pinned to the calendar, for summaries read long after.

"Yesterday" in a summary read three months later points at the wrong day. Where the
conversation dates a passage (a header such as ``[Session of 1:56 pm on 8 May,
2023]``), a relative expression in a chosen piece gets the date it meant in
parentheses: ``yesterday (7 May 2023)``, ``last week (the week before 8 May 2023)``,
``last year (2022)``. The words as written stay; only the date is added.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH = "(" + "|".join(m.capitalize() for m in MONTHS) + ")"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}) {_MONTH},? (\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH} (\d{{1,2}}),? (\d{{4}})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?!\d)")
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "a couple of": 2, "a few": 3}
_RELATIVE = re.compile(
    r"\b(yesterday|last night|tomorrow|last weekend|last week|next week|last month|"
    r"next month|last year|next year|(\d+|two|three|four|five|six|a couple of|a few) "
    r"(days|weeks) ago)\b(?! \()",
    re.IGNORECASE,
)


def parse_date(text: str) -> dt.date | None:
    """The first calendar date written in ``text`` (``8 May, 2023``, ``May 8, 2023``,
    ``2023-05-08``), or None."""
    if match := _DAY_MONTH_YEAR.search(text):
        return _date(int(match[3]), _month(match[2]), int(match[1]))
    if match := _MONTH_DAY_YEAR.search(text):
        return _date(int(match[3]), _month(match[1]), int(match[2]))
    if match := _ISO.search(text):
        return _date(int(match[1]), int(match[2]), int(match[3]))
    return None


def _month(name: str) -> int:
    return MONTHS.index(name.lower()) + 1


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def written(day: dt.date) -> str:
    """``7 May 2023``."""
    return f"{day.day} {MONTHS[day.month - 1].capitalize()} {day.year}"


def _month_of(day: dt.date, offset: int) -> str:
    index = day.year * 12 + day.month - 1 + offset
    return f"{MONTHS[index % 12].capitalize()} {index // 12}"


def pinned(text: str, today: dt.date) -> str:
    """``text`` with each relative date expression followed by the date it meant."""

    def meaning(match: re.Match[str]) -> str:
        return f"{match[0]} ({_resolve(match, today)})"

    return _RELATIVE.sub(meaning, text)


def _resolve(match: re.Match[str], today: dt.date) -> str:
    phrase = match[1].lower()
    day: Callable[[int], str] = lambda days: written(today + dt.timedelta(days=days))  # noqa: E731
    fixed = {
        "yesterday": lambda: day(-1),
        "last night": lambda: day(-1),
        "tomorrow": lambda: day(1),
        "last weekend": lambda: f"the weekend before {written(today)}",
        "last week": lambda: f"the week before {written(today)}",
        "next week": lambda: f"the week after {written(today)}",
        "last month": lambda: _month_of(today, -1),
        "next month": lambda: _month_of(today, 1),
        "last year": lambda: str(today.year - 1),
        "next year": lambda: str(today.year + 1),
    }
    if phrase in fixed:
        return fixed[phrase]()
    count = int(match[2]) if match[2].isdigit() else _NUMBERS[match[2].lower()]
    return day(-count * (7 if match[3].lower() == "weeks" else 1))
