"""The web console in a real browser: Debian's chromium (``make browser`` installs it) driven
by Playwright, against ``recap serve`` in its own process on a free loopback port."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright, sync_playwright

from benchmarks.processes import serving as recap_server
from tests.conftest import ROOT
from tests.service.conftest import turn
from tests.service.processes import recap_env

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(os.environ.get("RECAP_SCREENSHOTS") or ROOT / "out" / "screenshots")
"""Where the console's pictures go: out/ (ignored by git) unless ``make screenshots`` asks for
docs/screenshots, the README's copies. Tests never write tracked files."""
TIMEOUT_MS = 10_000
"""How long a browser step may wait for the page (the slowest is a compaction, ~1.5 s)."""


@contextlib.contextmanager
def serving(folder: Path, **env: str) -> Iterator[str]:
    """``recap serve`` on a free port with a database in ``folder``; its base URL. On the way
    out it must stop cleanly and have logged no traceback."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "serve.log"
    with recap_server(recap_env(f"sqlite:///{folder / 'recap.db'}", **env), log, cwd=folder) as (
        url,
        process,
    ):
        yield url
    output = log.read_text()
    assert process.returncode in (0, -15), output
    assert "Traceback" not in output, output


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """Headless chromium from Debian's package; fails (never skips) when it is missing."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium")
    browser = playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--headless=new"]
    )
    yield browser
    browser.close()


class Watched:
    """A page whose console errors and uncaught exceptions are collected."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.on("dialog", lambda dialog: dialog.accept())  # "Delete this session?" — yes
        page.set_default_timeout(TIMEOUT_MS)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"console: {message.text} ({message.location.get('url')})")

    def assert_no_errors(self, allowed: tuple[str, ...] = ()) -> None:
        errors = [e for e in self.errors if not any(a in e for a in allowed)]
        assert not errors, "the browser reported errors:\n" + "\n".join(errors)


@contextlib.contextmanager
def watched(browser: Browser, **context: Any) -> Iterator[Watched]:
    """A fresh browser context (no stored key, given viewport) and its watched page."""
    ctx = browser.new_context(**context)
    try:
        yield Watched(ctx.new_page())
    finally:
        ctx.close()


def screenshot(page: Page, name: str) -> None:
    """Write :data:`SCREENSHOTS`/NAME.png: the page as it is now."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def assert_accessible(page: Page, where: str) -> None:
    """axe-core (the copy the ``axe-playwright-python`` wheel ships) finds no violation of
    serious or critical impact on the page as it is now."""
    violations = Axe().run(page).response["violations"]
    grave = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not grave, f"accessibility ({where}):\n" + "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(", ".join(n["target"]) for n in v["nodes"][:5])
        for v in grave
    )


def transcript() -> list[dict[str, Any]]:
    """32 OpenAI chat messages, ~300 chars each: 15 exchanges, the third with a tool call."""
    messages: list[dict[str, Any]] = []
    for n in range(15):
        question, answer = turn(n)
        messages.append(question)
        if n == 2:
            call = {"name": "lookup_invoice", "arguments": json.dumps({"invoice": 1014})}
            messages += [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "call_lookup", "type": "function", "function": call}],
                },
                {
                    "role": "tool",
                    "tool_call_id": "call_lookup",
                    "content": "Invoice 1014: " + "paid in full on 3 May by bank transfer; " * 10,
                },
            ]
        messages.append(answer)
    return messages
