"""Reading conversations from files: JSON arrays, ``{"messages": [...]}`` or JSONL.

Every problem is reported as an :class:`~recap_memory.errors.InputError` that names
the file and the place (byte, line, message index) and says what to do.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from recap_memory.errors import InputError
from recap_memory.messages import Message, parse_messages

SUFFIXES = (".json", ".jsonl")


def read_text(path: str) -> str:
    """The file's text (``-`` is standard input), which must be UTF-8."""
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", where=path) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 (invalid byte at offset {exc.start}); re-encode the file as UTF-8",
            where=path,
        ) from exc


def parse_document(text: str, where: str) -> list[Any]:
    """The message dicts held by a JSON or JSONL document."""
    if not text.strip():
        raise InputError("the file is empty; expected a JSON array of chat messages", where=where)
    try:
        data = _loads(text, where)
    except json.JSONDecodeError as whole_error:
        return _parse_jsonl(text, where, whole_error)
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return list(data["messages"])
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and "role" in data:
        return [data]
    raise InputError(
        'expected a JSON array of messages or an object with a "messages" array', where=where
    )


MAX_DEPTH = 64
"""JSON nested deeper than this is no chat history (and would exhaust parsers downstream)."""


def check_json(value: Any, *, where: str | None = None, allow_nul: bool = True) -> Any:
    """``value`` when it is JSON every part of recap can store and write back: nested at
    most :data:`MAX_DEPTH` levels, numbers finite, every string valid Unicode (no lone
    surrogate from a ``"\\ud800"`` escape) and, unless ``allow_nul``, free of NUL
    characters (PostgreSQL text holds none). Raises :class:`InputError` otherwise."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not allow_nul and "\x00" in item:
                raise InputError("text may not contain NUL (\\u0000) characters", where=where)
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    raise InputError(
                        "text holds a lone surrogate (\\ud800-\\udfff): not valid Unicode",
                        where=where,
                    ) from None
        elif isinstance(item, float) and not math.isfinite(item):
            raise InputError(f"{item} is not a JSON number (NaN and Infinity are not)", where=where)
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep", where=where)
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return value


def _loads(text: str, where: str) -> Any:
    """``json.loads``, with nesting too deep for the parser as an :class:`InputError`."""
    try:
        return check_json(json.loads(text), where=where)
    except RecursionError:
        raise InputError("JSON nested too deeply to be a chat history", where=where) from None


def _parse_jsonl(text: str, where: str, whole_error: json.JSONDecodeError) -> list[Any]:
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) < 2:
        raise InputError(
            f"not valid JSON: {whole_error.msg} (line {whole_error.lineno}, "
            f"column {whole_error.colno})",
            where=where,
        )
    items = []
    for n, line in lines:
        try:
            items.append(_loads(line, f"{where}: line {n}"))
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON or JSONL: line {n}, column {exc.colno}: {exc.msg}", where=where
            ) from exc
    return items


def read_conversation(path: str) -> list[Message]:
    """Read and validate one conversation file (``-`` for standard input)."""
    where = "<stdin>" if path == "-" else path
    return parse_messages(parse_document(read_text(path), where), source=where)


def expand_inputs(paths: list[str]) -> list[str]:
    """The files named, with each directory replaced by its .json/.jsonl files (sorted)."""
    return [str(p) for path in paths for p in _expand(path)]


def _expand(path: str) -> Iterator[str | Path]:
    if path != "-" and Path(path).is_dir():
        found = sorted(p for p in Path(path).iterdir() if p.suffix in SUFFIXES and p.is_file())
        if not found:
            raise InputError("the directory holds no .json or .jsonl files", where=path)
        yield from found
    else:
        yield path
