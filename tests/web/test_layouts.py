"""Every view of the console at a phone's and a tablet's size, as a person reads it: the
sessions in a drawer (phone), the composer on screen, the summary rendered, the originals and
Session Memory opened into view, the dashboard's charts with axes and a tooltip that names the
session and time of a pass; each view passes axe-core with no serious or critical violation.
Screenshots go to out/screenshots/ (`make screenshots`: docs/screenshots/)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.service.conftest import turn
from tests.web.conftest import assert_accessible, screenshot, serving, transcript, watched

PHONE = {"width": 390, "height": 844}
TABLET = {"width": 768, "height": 1024}
DESKTOP = {"width": 1280, "height": 860}
TWIN_TITLE = "Priya – Larchwood invoice dispute, escalated from the Tuesday queue"
LATER_TITLE = "Marco – refund for order 5521"
CAP_CHARS = 3_000


@dataclass(frozen=True)
class Populated:
    """A running console with a compacted session, its same-titled twin, an empty one and one
    compacted later."""

    url: str
    compacted: str
    twin: str
    empty: str
    later: str


def _wait_for_summary(client: httpx.Client, session: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        state = client.get(f"/sessions/{session}").json()
        if state["summarized_through"] is not None and not state["due"] and not state["compacting"]:
            return
        time.sleep(0.1)
    pytest.fail(f"session {session} was not compacted within 20 s")


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Populated]:
    """``recap serve`` (extractive summaries, a hard cap) holding the sessions the views show.
    A first session's messages come first, so database ids and positions differ."""
    with (
        serving(tmp_path_factory.mktemp("layouts"), RECAP_MAX_CHARS=str(CAP_CHARS)) as url,
        httpx.Client(base_url=url, timeout=10) as client,
    ):

        def session(title: str, messages: list[dict[str, Any]]) -> str:
            made = client.post("/sessions", json={"title": title}).json()["id"]
            if messages:
                client.post(f"/sessions/{made}/messages", json={"messages": messages})
            return str(made)

        twin = session(TWIN_TITLE, turn(0, size=120) + turn(1, size=120))
        compacted = session(TWIN_TITLE, transcript())
        _wait_for_summary(client, compacted)
        empty = session("Nothing here yet", [])
        later = session(LATER_TITLE, transcript())
        _wait_for_summary(client, later)
        yield Populated(url, compacted, twin, empty, later)


def fits_the_width(page: Page) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"the page is {wide} px wide at a {width} px viewport"


def open_sessions(page: Page, phone: bool) -> None:
    """Bring the session list on screen (the drawer on a phone)."""
    if phone:
        expect(page.locator("#sidebar")).to_be_hidden()
        page.locator("#sessions-toggle").tap()
        expect(page.locator("#sessions-toggle")).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#sidebar")).to_be_in_viewport(ratio=0.9)


@pytest.mark.parametrize(
    ("viewport", "name"), [(PHONE, "phone"), (TABLET, "tablet")], ids=["phone", "tablet"]
)
def test_every_view_reads_well_and_is_accessible(
    browser: Browser, populated: Populated, viewport: dict[str, int], name: str
) -> None:
    phone = viewport is PHONE
    with watched(browser, viewport=viewport, is_mobile=phone, has_touch=True) as w:
        page = w.page
        page.goto(populated.url)

        # nothing open yet: a line that says what to do, and a way to start
        expect(page.locator("#welcome")).to_be_visible()
        expect(page.locator("#welcome-new")).to_be_in_viewport()
        fits_the_width(page)
        assert_accessible(page, f"{name}: welcome")

        # the sessions (a drawer on a phone); same titles told apart; the drawer closes on a pick
        open_sessions(page, phone)
        for twin in (populated.compacted, populated.twin):  # told apart: start time, short id
            expect(page.locator(f'#sessions li[data-id="{twin}"] .twin')).to_contain_text(twin[:8])
        assert_accessible(page, f"{name}: session list")
        screenshot(page, f"sessions-{name}")
        page.locator(f'#sessions li[data-id="{populated.compacted}"] .open').tap()
        if phone:
            expect(page.locator("#sidebar")).to_be_hidden()

        # the conversation: the composer on screen without scrolling, the summary rendered
        for control in ("#message", "#send"):
            expect(page.locator(control)).to_be_in_viewport(ratio=1)
        card = page.locator("#record .summary-card").first
        expect(card).to_be_visible()
        assert card.locator(".markdown li").count() >= 1, "the summary's bullets are a list"
        assert "**" not in card.locator(".markdown").inner_text()
        expect(card.locator("header .range")).to_have_text("Messages 1–30")
        fits_the_width(page)
        assert_accessible(page, f"{name}: conversation")
        screenshot(page, f"chat-{name}")

        # the originals open into view
        card.locator("button.expand").tap()
        expect(card.locator(".folded .message").first).to_be_in_viewport()
        expect(card.locator(".folded .message .meta").first).to_contain_text("#1 · user")
        card.locator("button.expand").tap()

        # Session Memory comes into view with its gauge and chain
        page.locator("#memory-button").tap()
        memory = page.locator("#memory")
        expect(memory).to_be_in_viewport(ratio=0.9)
        gauge = memory.locator('[role="meter"]')
        expect(gauge).to_be_visible()
        expect(memory.locator(".mark-label.cap")).to_contain_text(f"hard cap {CAP_CHARS:,}")
        expect(memory.locator("details.chain-row")).not_to_have_count(0)
        fits_the_width(page)
        assert_accessible(page, f"{name}: Session Memory")
        screenshot(page, f"memory-{name}")
        memory.locator("#memory-close").tap()
        expect(memory).to_be_hidden()
        expect(page.locator("#message")).to_be_in_viewport(ratio=1)

        # the dashboard: axes with units, a legend, a pass's session and time on focus
        page.locator("#tab-dashboard").tap()
        chart = page.locator("#compaction-chart")
        expect(chart).to_be_visible()
        expect(chart.locator("text.axis-title").first).to_have_text("chars in context")
        expect(page.locator("#passes-figure .legend")).to_contain_text("before the pass")
        tick = chart.locator("text.tick").first.bounding_box()
        assert tick is not None and tick["height"] >= 10, f"axis labels are squashed: {tick}"
        caption = page.locator("#passes-figure figcaption").bounding_box()
        assert caption is not None and caption["width"] >= viewport["width"] * 0.6
        chart.locator("g.item").last.focus()
        tip = page.locator("#passes-tip")
        expect(tip).to_be_visible()
        expect(tip).to_contain_text(LATER_TITLE)
        expect(tip).to_contain_text(time.strftime("%Y"))
        expect(page.locator("#saved-chart g.item")).not_to_have_count(0)
        fits_the_width(page)
        assert_accessible(page, f"{name}: dashboard")
        screenshot(page, f"dashboard-{name}")
        w.assert_no_errors()


def test_the_dashboard_is_read_by_keyboard(browser: Browser, populated: Populated) -> None:
    """One tab stop per chart; the arrow keys move between passes (the tooltip follows);
    Enter opens the pass's session."""
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(populated.url)
        page.click("#tab-dashboard")
        items = page.locator("#compaction-chart g.item")
        expect(items).to_have_count(2)
        assert [items.nth(i).get_attribute("tabindex") for i in range(2)] == ["-1", "0"]
        page.locator("#tab-dashboard").focus()
        page.keyboard.press("Tab")  # the first chart's one stop: its newest pass
        assert page.evaluate("document.activeElement.closest('svg').id") == "compaction-chart"
        tip = page.locator("#passes-tip")
        expect(tip).to_contain_text(LATER_TITLE)
        page.keyboard.press("ArrowLeft")
        expect(tip).to_contain_text(TWIN_TITLE)
        assert [items.nth(i).get_attribute("tabindex") for i in range(2)] == ["0", "-1"]
        page.keyboard.press("Tab")  # on to the next chart, not the next pass
        assert page.evaluate("document.activeElement.closest('svg').id") == "saved-chart"
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Enter")
        expect(page.locator("#chat-view")).to_be_visible()
        expect(page.locator(f'#sessions li[data-id="{populated.compacted}"]')).to_have_class(
            "active"
        )
        expect(page.locator("#record .summary-card")).to_have_count(1)
        w.assert_no_errors()


def test_find_in_a_session_reaches_the_folded_originals(
    browser: Browser, populated: Populated
) -> None:
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(f"{populated.url}/#session/{populated.compacted}")
        folded = page.locator("#record .folded")
        expect(folded).to_have_count(1)
        expect(folded).to_be_hidden()
        find, status = page.locator("#find"), page.locator("#find-status")
        find.fill("INVOICE 1014")  # any case; in messages 4, 5 and 7, all folded
        expect(status).to_have_text("1 of 3 messages")
        expect(folded).to_be_visible()  # the card holding the match opened
        current = page.locator("#record .message.current-find")
        expect(current).to_be_in_viewport()
        expect(current.locator(".meta")).to_contain_text("#4 · assistant")
        find.press("Enter")
        expect(status).to_have_text("2 of 3 messages")
        expect(current.locator(".meta")).to_contain_text("#5 · user")
        find.press("Enter")
        expect(current.locator(".meta")).to_contain_text("#7 · tool")
        find.press("Enter")  # round to the first again
        expect(status).to_have_text("1 of 3 messages")
        find.press("Shift+Enter")
        expect(status).to_have_text("3 of 3 messages")
        expect(page.locator("#record .message.found")).to_have_count(3)
        assert_accessible(page, "desktop: find")
        find.fill("no such words")
        expect(status).to_have_text("No message contains “no such words”.")
        expect(page.locator("#record .message.found")).to_have_count(0)
        w.assert_no_errors()


def test_dark_mode_follows_the_system_and_stays_readable(
    browser: Browser, populated: Populated
) -> None:
    with watched(browser, viewport=DESKTOP, color_scheme="dark") as w:
        page = w.page
        page.goto(f"{populated.url}/#session/{populated.compacted}")
        expect(page.locator("#record .summary-card")).to_have_count(1)
        lightness = page.evaluate(
            "getComputedStyle(document.body).backgroundColor.match(/\\d+/g).slice(0, 3)"
            ".reduce((sum, c) => sum + Number(c), 0) / 3"
        )
        assert lightness < 60, f"the page is not dark (mean channel {lightness})"
        assert_accessible(page, "dark: conversation")  # contrast included
        screenshot(page, "chat-dark")
        page.click("#memory-button")
        expect(page.locator("#memory")).to_be_visible()
        assert_accessible(page, "dark: Session Memory")
        page.click("#tab-dashboard")
        expect(page.locator("#compaction-chart g.item")).to_have_count(2)
        assert_accessible(page, "dark: dashboard")
        w.assert_no_errors()
