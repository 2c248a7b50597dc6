"""Tool output as summary pieces: JSON as its values, logs with repeats collapsed.

A JSON result becomes ``key: value`` fact lines (one per top-level item, in the
order written). Text lines that differ only in their numbers and ids (log lines,
metric samples) collapse to one line with a count and the range of each number
that varies: ``14× level=error svc=orders-db msg="slow query …" ms=900–4000``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

FACT_CHARS = 160
"""A JSON item's facts are cut into lines of about this many characters."""
COLLAPSE_FROM = 3
"""Lines of one shape collapse into a digest from this many on."""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_TOKEN_NUMBER = re.compile(r"^(\D*?)(-?\d+(?:\.\d+)?)(\D*)$")
_VARIABLE = re.compile(r"[0-9a-f]{8,}|\d+(?:[.:]\d+)*", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-./:@']*[A-Za-z0-9]|[A-Za-z0-9]")
_IDENTIFIER = re.compile(
    r"(?=.*\d)(?=.*[A-Za-z_\-])[A-Za-z0-9_\-.@]{3,}|[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+|[A-Z]{3,6}"
)


def identifiers(text: str) -> frozenset[str]:
    """Identifier-like tokens kept whole (``mia_li_3668``, ``HAT136``, ``2024-05-20``,
    ``one_way``, ``JFK``): digits mixed with letters or joined by ``_``/``-``, snake_case
    words, codes in capitals; casefolded."""
    return frozenset(
        token.casefold() for token in _WORD.findall(text) if _IDENTIFIER.fullmatch(token)
    )


def shape(text: str) -> str:
    """``text`` with its numbers, hex ids and timestamps blanked: lines of one shape say
    the same thing about different values."""
    return _VARIABLE.sub("#", text)


def json_facts(text: str) -> list[str] | None:
    """Tool output that is JSON, as fact lines (``key: value, key: value``); None when it
    is not a JSON object or list."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return None
    if not isinstance(data, dict | list):
        return None
    facts: list[str] = []
    for item in data if isinstance(data, list) else [data]:
        line = ""
        for key, value in _leaves(item, ""):
            pair = f"{key}: {value}" if key else value
            if line and len(line) + len(pair) > FACT_CHARS:
                facts.append(line)
                line = ""
            line = f"{line}, {pair}" if line else pair
        if line:
            facts.append(line)
    return facts


def _leaves(value: object, key: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, key)
    elif value is not None and value != "":
        yield key, str(value)


def collapsed_lines(lines: list[str]) -> list[str]:
    """``lines`` in order, each run of :data:`COLLAPSE_FROM` or more lines of one shape
    (wherever they stand) written once, where the first of them stood, as a digest."""
    by_shape: dict[str, list[str]] = {}
    for line in lines:
        by_shape.setdefault(shape(line), []).append(line)
    out: list[str] = []
    for line in lines:
        same = by_shape[shape(line)]
        if len(same) < COLLAPSE_FROM:
            out.append(line)
        elif line is same[0]:
            out.append(digest(same))
    return out


def digest(lines: list[str]) -> str:
    """Lines of one shape as ``N× line``, each varying number as its range and each other
    varying token as ``…``."""
    split = [line.split(" ") for line in lines]
    if len({len(tokens) for tokens in split}) != 1:
        return f"{len(lines)}× {lines[0]}"
    merged = [_merge([tokens[i] for tokens in split]) for i in range(len(split[0]))]
    return f"{len(lines)}× " + " ".join(merged)


def _merge(values: list[str]) -> str:
    """One position of several lines: the token when it never varies, a number's range,
    else ``…``."""
    if len(set(values)) == 1:
        return values[0]
    matches = [_TOKEN_NUMBER.match(v) for v in values]
    if all(matches) and len({(m[1], m[3]) for m in matches if m}) == 1:
        first = matches[0]
        assert first is not None
        numbers = [float(m[2]) for m in matches if m]
        low, high = min(numbers), max(numbers)
        return f"{first[1]}{_number(low)}–{_number(high)}{first[3]}"
    return "…"


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"
