"""Shared fixtures: the evaluation data beside the checkout, message builders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recap_memory.messages import Message, ToolCall

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("RECAP_DATA_DIR", ROOT.parent / "shared" / "data"))


def load_data(name: str) -> Any:
    """A file of ../shared/data; fails (not skips) when it is missing."""
    path = DATA / name
    if not path.exists():
        pytest.fail(f"evaluation data {path} is missing; set RECAP_DATA_DIR to its folder")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return json.loads(path.read_text())


CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("RECAP_LLM", "OPENAI_"))}


def recap(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the ``recap`` CLI in a real process (no model configured unless ``env`` says so)."""
    return subprocess.run(
        [sys.executable, "-m", "recap_memory", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=300,
        env={**CLEAN_ENV, **(env or {})},
    )


def user(text: str, **kw: Any) -> Message:
    return Message(role="user", content=text, **kw)


def assistant(text: str | None = None, calls: list[tuple[str, str]] = (), **kw: Any) -> Message:  # type: ignore[assignment]
    return Message(
        role="assistant",
        content=text,
        tool_calls=tuple(ToolCall(id=i, name=n, arguments="{}") for i, n in calls),
        **kw,
    )


def tool(call_id: str, text: str, name: str = "lookup", **kw: Any) -> Message:
    return Message(role="tool", content=text, tool_call_id=call_id, name=name, **kw)


def system(text: str = "You are helpful.") -> Message:
    return Message(role="system", content=text)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tiers follow from what a test uses: the browser tests live in tests/web, and a
    test's PostgreSQL case is the ``postgres``/``postgresql`` value of a parameter."""
    for item in items:
        if "tests/web/" in item.nodeid:
            item.add_marker(pytest.mark.browser)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(value in ("postgres", "postgresql") for value in params.values()):
            item.add_marker(pytest.mark.postgres)
