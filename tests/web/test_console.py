"""The web console at ``/`` as a person uses it, in headless chromium against ``recap serve``:
import a transcript, watch it being summarised live, read the summary card and what it folds,
the Session Memory panel and the dashboard; at a phone's width, by keyboard, with an API key.
Screenshots of the main views go to out/screenshots/ (`make screenshots`: docs/screenshots/)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from playwright.sync_api import Error as PlaywrightError

from recap_memory.testing.model_server import Hang, ModelServer, Reply, Status
from tests.service.conftest import turn
from tests.web.conftest import assert_accessible, screenshot, serving, transcript, watched

DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
TABLET = {"width": 768, "height": 1024}
HANG_S = 1.5
"""How long the stub model keeps a summarization waiting before it fails (and the extractive
fallback compacts): long enough to see the indicator."""


@pytest.fixture(scope="module")
def slow_model() -> Iterator[ModelServer]:
    with ModelServer(default=Hang(HANG_S)) as model:
        yield model


@pytest.fixture(scope="module")
def console(slow_model: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``recap serve`` whose summarizer model hangs, then the extractive fallback compacts."""
    with serving(
        tmp_path_factory.mktemp("console"),
        RECAP_LLM="openai:slow",
        RECAP_LLM_URL=slow_model.url,
        RECAP_LLM_ATTEMPTS="1",
        RECAP_FALLBACK="extractive",
    ) as url:
        yield url


@pytest.fixture
def api(console: str) -> Iterator[httpx.Client]:
    """A client of the console's service, for what the page should agree with."""
    with httpx.Client(base_url=console, timeout=10) as client:
        yield client


class EventLog(threading.Thread):
    """The session's Server-Sent Events as a second client receives them, with the time each
    arrived, until a summarization finishes or fails."""

    def __init__(self, url: str, session: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(daemon=True)
        self.url, self.session, self.headers = url, session, headers or {}
        self.connected = threading.Event()
        self.seen: list[tuple[str, float, Any]] = []

    def run(self) -> None:
        with (
            httpx.Client(timeout=30, headers=self.headers) as client,
            client.stream("GET", f"{self.url}/sessions/{self.session}/events") as stream,
        ):
            name, data = "message", []
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
                elif not line and data:
                    self.seen.append((name, time.monotonic(), json.loads("\n".join(data))))
                    self.connected.set()
                    if name in ("summarization.finished", "summarization.failed"):
                        return
                    name, data = "message", []

    def at(self, event: str) -> float:
        return next(t for name, t, _ in self.seen if name == event)

    def data(self, event: str) -> Any:
        return next(d for name, _, d in self.seen if name == event)

    def names(self) -> list[str]:
        return [name for name, _, _ in self.seen]


def listen(url: str, session: str, headers: dict[str, str] | None = None) -> EventLog:
    log = EventLog(url, session, headers)
    log.start()
    assert log.connected.wait(10), "no session.state event"
    return log


def new_session(page: Page) -> str:
    """Click "new session"; wait until the console listens to its events; its id."""
    with page.expect_response(lambda r: urlsplit(r.url).path.endswith("/events")) as opened:
        page.click("#new-session")
    session = urlsplit(opened.value.url).path.split("/")[-2]
    expect(page.locator(f'#sessions li[data-id="{session}"]')).to_be_visible()
    return session


def dom_messages(page: Page, *, folded: bool) -> list[tuple[int, str]]:
    """(id, role) of the messages in #record, folded under a summary or not."""
    items = page.eval_on_selector_all(
        "#record .message[data-id]",
        "els => els.map(e => [Number(e.dataset.id), e.dataset.role, !!e.closest('.folded')])",
    )
    return [(i, role) for i, role, inside in items if inside == folded]


def test_an_imported_transcript_is_summarised_live(
    browser: Browser, console: str, api: httpx.Client, tmp_path: Path
) -> None:
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(console)
        expect(page.locator("#summarising")).to_be_hidden()
        warm_up = api.post("/sessions", json={"title": "Earlier"}).json()["id"]
        api.post(f"/sessions/{warm_up}/messages", json={"messages": turn(0, size=80)})
        session = new_session(page)
        assert api.get("/sessions").json()["items"][0]["id"] == session
        expect(page.locator("#sessions li").first).to_have_attribute("data-id", session)
        expect(page.locator("#memory-button")).to_have_attribute("data-busy", "false")
        expect(page.locator("#failure")).to_be_hidden()

        events = listen(console, session)
        path = tmp_path / "transcript.json"
        path.write_text(json.dumps(transcript()))
        page.set_input_files("#import-file", path)

        # the indicator shows while the model hangs, and clears on summarization.finished
        expect(page.locator("#summarising")).to_be_visible()
        shown = time.monotonic()
        expect(page.locator("#summarising")).to_contain_text("Summarising")
        expect(page.locator("#memory-button")).to_have_attribute("data-busy", "true")
        expect(page.locator("#summarising")).to_be_hidden(timeout=15_000)
        cleared = time.monotonic()
        expect(page.locator("#memory-button")).to_have_attribute("data-busy", "false")
        events.join(10)
        assert events.names()[-2:] == ["summarization.started", "summarization.finished"], (
            events.names()
        )
        started, finished = events.at("summarization.started"), events.at("summarization.finished")
        assert finished - started >= HANG_S - 0.2, "the model's hang should delay the pass"
        assert shown < finished, "the indicator should show while the pass runs"
        assert cleared > finished - 0.3, (
            f"the indicator cleared {finished - cleared:.2f} s before summarization.finished"
        )
        assert events.data("summarization.finished")["path"] == "fallback"
        expect(page.locator("#failure")).to_be_hidden()

        # the summary card covers exactly the API's first summary row
        row = api.get(f"/sessions/{session}/summaries").json()[0]
        first, last = row["first_message_id"], row["last_message_id"]
        assert row["episode_range"] == f"{first}-{last}"
        card = page.locator(f'#record .summary-card[data-range="{row["episode_range"]}"]')
        expect(card).to_be_visible()
        expect(page.locator("#record .summary-card")).to_have_count(1)
        stored = api.get(f"/sessions/{session}/messages", params={"limit": 1000}).json()["items"]
        assert len(stored) == len(transcript())
        position = {m["id"]: n for n, m in enumerate(stored, start=1)}
        assert first > 1, "another session wrote first: ids are not positions here"
        # positions within the session, never the database's ids
        assert (row["first_position"], row["last_position"]) == (position[first], position[last])
        expect(card.locator("header .range")).to_have_text(f"Messages 1–{position[last]}")
        expect(card.locator("header .range")).to_have_attribute(
            "title", f"message ids {first}–{last}"
        )
        expect(card).to_contain_text(f"{row['source_chars']:,} → {row['chars']:,} chars")
        tail = page.locator("#record > .message .meta").first
        after = stored[position[last]]  # the first message after the summary
        expect(tail).to_have_text(
            re.compile(rf"^#{position[last] + 1} · {after['role']} · \d\d:\d\d$")
        )
        expect(tail.locator("time")).to_have_attribute("datetime", after["created_at"])
        # the summary is rendered: a list, bold headings, no markdown marks left
        rendered = card.locator(".markdown")
        assert rendered.locator("li").count() >= 1 and rendered.locator("strong").count() >= 1
        assert "**" not in rendered.inner_text()
        assert_accessible(page, "desktop: conversation")
        assert dom_messages(page, folded=False) == [
            (m["id"], m["role"]) for m in stored if m["id"] > last
        ]
        screenshot(page, "chat")

        # expanding it shows the original messages of its range, tool call and result too
        folded = card.locator(".folded")
        expect(folded).to_be_hidden()
        card.locator("button.expand").click()
        expect(folded).to_be_visible()
        expect(folded.locator(".message").first).to_be_in_viewport()  # brought into view
        assert dom_messages(page, folded=True) == [
            (m["id"], m["role"]) for m in stored if first <= m["id"] <= last
        ]
        call = folded.locator('.message[data-role="assistant"] .tool-call')
        expect(call).to_contain_text("lookup_invoice")
        result = folded.locator('.message[data-role="tool"] .tool-result')
        expect(result.locator("details")).to_have_count(1)  # a long result starts collapsed
        card.locator("button.expand").click()
        expect(folded).to_be_hidden()

        # Session Memory: the chain and the next context's size against the threshold
        expect(page.locator("#memory")).to_be_hidden()
        page.click("#memory-button")
        memory = page.locator("#memory")
        expect(memory).to_be_visible()
        chain_row = memory.locator(f'details.chain-row[data-range="{row["episode_range"]}"]')
        expect(chain_row).to_be_visible()
        expect(chain_row.locator("summary")).to_contain_text(f"Messages 1–{position[last]}")
        expect(chain_row).to_have_attribute("open", "")  # the latest row starts open
        context = api.get(f"/sessions/{session}/context").json()
        size = page.locator("#context-size")
        for figure in (context["chars"], context["tokens"], 2000):
            expect(size).to_contain_text(f"{figure:,}")
        expect(page.locator("#compact-now")).to_be_visible()
        gauge = memory.locator('[role="meter"]')
        expect(gauge).to_have_attribute("aria-valuenow", str(context["chars"]))
        expect(gauge).to_have_attribute("aria-valuemax", "2000")
        assert_accessible(page, "desktop: Session Memory")
        screenshot(page, "memory")

        # the dashboard: the figures of /stats and the chart of the compaction
        page.click("#tab-dashboard")
        expect(page.locator("#dashboard")).to_be_visible()
        expect(page.locator("#record")).to_be_hidden()
        stats = api.get("/stats").json()["summary"]
        assert stats["total_summarizations"] >= 1
        for key in (
            "total_summarizations",
            "total_chars_compacted",
            "sessions_compacted",
            "estimated_tokens_saved",
            "total_sessions",
        ):
            expect(page.locator(f"#stat-{key}")).to_have_text(f"{stats[key]:,}")
        chart = page.locator("svg#compaction-chart")
        expect(chart).to_be_visible()
        passes = api.get("/stats/compactions").json()
        expect(chart.locator("g.item")).to_have_count(len(passes))
        chart.locator("g.item").last.hover()
        expect(page.locator("#passes-tip")).to_contain_text(
            f"{passes[-1]['chars_before']:,} → {passes[-1]['chars_after']:,} chars"
        )
        expect(page.locator("#passes-table tbody tr")).to_have_count(len(passes))
        assert_accessible(page, "desktop: dashboard")
        screenshot(page, "dashboard")
        page.click("#tab-chat")
        expect(page.locator("#dashboard")).to_be_hidden()
        expect(card).to_be_visible()
        w.assert_no_errors()


def test_sessions_list_newest_first_open_and_delete(
    browser: Browser, console: str, api: httpx.Client
) -> None:
    older = api.post("/sessions", json={"title": "Older"}).json()["id"]
    api.post(
        f"/sessions/{older}/messages",
        json={"messages": [{"role": "user", "content": "Where is invoice 1007?"}]},
    )
    newer = api.post("/sessions", json={"title": "Newer"}).json()["id"]
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(console)
        listed = [s["id"] for s in api.get("/sessions", params={"limit": 200}).json()["items"]]
        expect(page.locator("#sessions li")).to_have_count(len(listed))
        assert page.eval_on_selector_all("#sessions li", "els => els.map(e => e.dataset.id)") == (
            listed
        )
        assert listed[:2] == [newer, older]
        # last activity and labelled sizes: what the record holds, what the model reads next
        item = api.get(f"/sessions/{older}").json()
        listed_older = page.locator(f'#sessions li[data-id="{older}"]')
        expect(listed_older.locator("time")).to_have_attribute("datetime", item["updated_at"])
        expect(listed_older.locator("time")).to_have_text("just now")
        expect(listed_older).to_contain_text(
            f"Record {item['char_count']} · next context {item['context_chars']} chars"
        )
        expect(listed_older).to_contain_text("1 message ·")
        assert page.locator("#sessions .twin").count() == 0  # titles differ: no tie-breaker
        # the filter narrows the list by title
        page.locator("#session-filter").fill("olde")
        expect(page.locator("#sessions li")).to_have_count(1)
        expect(page.locator("#sessions li").first).to_have_attribute("data-id", older)
        page.locator("#session-filter").fill("no such title")
        expect(page.locator("#sessions li.empty")).to_contain_text("No session matches")
        page.locator("#session-filter").fill("")
        expect(page.locator("#sessions li")).to_have_count(len(listed))
        page.locator(f'#sessions li[data-id="{older}"]').click()
        expect(page.locator("#record")).to_contain_text("Where is invoice 1007?")
        page.locator(f'#sessions li[data-id="{newer}"] .delete').click()  # confirms
        expect(page.locator(f'#sessions li[data-id="{newer}"]')).to_have_count(0)
        assert api.get(f"/sessions/{newer}").status_code == 404
        expect(page.locator(f'#sessions li[data-id="{older}"]')).to_be_visible()
        w.assert_no_errors()


def test_import_takes_a_messages_object_and_jsonl(
    browser: Browser, console: str, api: httpx.Client, tmp_path: Path
) -> None:
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"messages": turn(0, size=60)}))
    lines = tmp_path / "lines.jsonl"
    lines.write_text("".join(json.dumps(m) + "\n" for m in turn(1, size=60)))
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(console)
        session = new_session(page)
        page.set_input_files("#import-file", wrapped)
        expect(page.locator("#record .message")).to_have_count(2)
        page.set_input_files("#import-file", lines)
        expect(page.locator("#record .message")).to_have_count(4)
        items = api.get(f"/sessions/{session}/messages").json()["items"]
        assert [m["content"] for m in items] == [m["content"] for m in turn(0, 60) + turn(1, 60)]
        assert dom_messages(page, folded=False) == [(m["id"], m["role"]) for m in items]
        w.assert_no_errors()


def test_keyboard_tab_to_the_message_box_enter_sends(
    browser: Browser, console: str, api: httpx.Client
) -> None:
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(console)
        session = new_session(page)
        page.evaluate("document.activeElement && document.activeElement.blur()")
        for _ in range(40):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.id") == "message":
                break
        else:
            pytest.fail("Tab never reached #message")
        page.keyboard.type("first line")
        page.keyboard.press("Shift+Enter")
        page.keyboard.type("second line")
        expect(page.locator("#message")).to_have_value("first line\nsecond line")
        assert api.get(f"/sessions/{session}/messages").json()["items"] == []
        page.keyboard.press("Enter")
        sent = page.locator('#record .message[data-role="user"]')
        expect(sent).to_have_count(1)
        expect(sent).to_contain_text("second line")
        expect(page.locator("#message")).to_have_value("")
        items = api.get(f"/sessions/{session}/messages").json()["items"]
        assert [(m["role"], m["content"]) for m in items] == [("user", "first line\nsecond line")]
        # no chat model: the role select writes either side
        options = page.eval_on_selector_all("#role option", "els => els.map(e => e.value)")
        assert options == ["user", "assistant", "system"]
        page.select_option("#role", "assistant")
        page.locator("#message").focus()
        page.keyboard.type("an answer")
        page.keyboard.press("Enter")
        expect(page.locator('#record .message[data-role="assistant"]')).to_contain_text("an answer")
        items = api.get(f"/sessions/{session}/messages").json()["items"]
        assert [(m["role"], m["content"]) for m in items][1:] == [("assistant", "an answer")]
        w.assert_no_errors()


def _scroll_to(target: Locator, tries: int = 3) -> None:
    """Scroll ``target`` into view; the session list may be re-rendered (a live event)
    while it scrolls, and the locator then finds the new element."""
    for attempt in range(tries):
        try:
            target.scroll_into_view_if_needed()
            return
        except PlaywrightError as exc:
            if "not attached" not in str(exc) or attempt == tries - 1:
                raise


def test_phone_width_reaches_sessions_and_composer(browser: Browser, console: str) -> None:
    with watched(browser, viewport=PHONE, is_mobile=True, has_touch=True) as w:
        page = w.page
        page.goto(console)
        width = PHONE["width"]
        overflow = page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= width, f"the page is {overflow} px wide at a {width} px viewport"
        page.locator("#sessions-toggle").tap()  # the sessions live in a drawer
        session = new_session(page)
        expect(page.locator("#sidebar")).to_be_hidden()  # a pick closes it
        page.locator("#sessions-toggle").tap()
        expect(page.locator(f'#sessions li[data-id="{session}"]')).to_be_in_viewport()
        page.keyboard.press("Escape")
        expect(page.locator("#sidebar")).to_be_hidden()
        for selector in ("#message", "#send"):
            target = page.locator(selector).first
            _scroll_to(target)
            expect(target).to_be_visible()
            box = target.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (
                f"{selector} lies outside the screen: {box}"
            )
        expect(page.locator("#role")).to_be_visible()  # no chat model: either side is written
        page.locator("#message").fill("Sent from a phone")
        page.locator("#send").tap()
        expect(page.locator('#record .message[data-role="user"]')).to_contain_text(
            "Sent from a phone"
        )
        overflow = page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= width, f"the page is {overflow} px wide at a {width} px viewport"
        screenshot(page, "phone")
        w.assert_no_errors()


def test_a_failed_summarization_shows_its_reason(browser: Browser, tmp_path: Path) -> None:
    with (
        ModelServer(default=Status(500, {"error": {"message": "model melted"}})) as model,
        serving(
            tmp_path,
            RECAP_LLM="openai:broken",
            RECAP_LLM_URL=model.url,
            RECAP_LLM_ATTEMPTS="1",
            RECAP_FALLBACK="none",
            RECAP_RETRY_BASE_S="60",
        ) as url,
        watched(browser, viewport=DESKTOP) as w,
    ):
        page = w.page
        page.goto(url)
        # a fresh service: the list and the main pane say what to do
        expect(page.locator("#sessions li.empty")).to_contain_text("No sessions yet")
        expect(page.locator("#welcome")).to_contain_text("Open a session")
        session = new_session(page)
        expect(page.locator("#welcome")).to_be_hidden()
        expect(page.locator("#record .empty")).to_contain_text("No messages yet")
        events = listen(url, session)
        messages = [m for n in range(12) for m in turn(n)]
        httpx.post(f"{url}/sessions/{session}/messages", json={"messages": messages}, timeout=10)
        events.join(10)
        assert events.names()[-1] == "summarization.failed", events.names()
        failure = page.locator("#failure")
        expect(failure).to_be_visible()
        expect(failure).to_contain_text(events.data("summarization.failed")["reason"])
        failing = page.locator(f'#sessions li[data-id="{session}"] .status.failing')
        expect(failing).to_have_text("Compaction failing")
        expect(failing).to_have_attribute(
            "title", re.compile(re.escape(events.data("summarization.failed")["reason"]))
        )
        expect(page.locator("#summarising")).to_be_hidden()
        expect(page.locator("#memory-button")).to_have_attribute("data-busy", "false")
        w.assert_no_errors()


def test_with_api_keys_the_console_asks_for_one(browser: Browser, tmp_path: Path) -> None:
    with serving(tmp_path, RECAP_API_KEYS="secret:team") as url:
        auth = {"Authorization": "Bearer secret"}
        session = httpx.post(f"{url}/sessions", json={"title": "Team notes"}, headers=auth).json()[
            "id"
        ]
        with watched(browser, viewport=DESKTOP) as w:
            page = w.page
            page.goto(url)
            expect(page.locator("#login")).to_be_visible()
            expect(page.locator("#sessions li")).to_have_count(0)
            assert_accessible(page, "desktop: sign-in")
            for size in (PHONE, TABLET):
                page.set_viewport_size(size)
                expect(page.locator("#login-form")).to_be_in_viewport(ratio=1)
                expect(page.locator("#sessions-toggle")).to_be_hidden()  # nothing to list yet
                assert_accessible(page, f"{size['width']} px: sign-in")
            page.set_viewport_size(DESKTOP)
            page.locator("#api-key").fill("not-the-key")
            page.click("#login-submit")
            expect(page.locator("#login")).to_be_visible()
            page.locator("#api-key").fill("secret")
            page.click("#login-submit")
            expect(page.locator("#login")).to_be_hidden()
            item = page.locator(f'#sessions li[data-id="{session}"]')
            expect(item).to_contain_text("Team notes")
            item.click()
            expect(page.locator("#message")).to_be_enabled()
            # the browser logs each refused request (401) by itself; nothing else may fail
            w.assert_no_errors(allowed=("status of 401",))


def test_a_chat_model_answers_streamed_and_compact_now_folds(
    browser: Browser, tmp_path: Path
) -> None:
    answer = "Invoice 1007 was paid by bank transfer on day 3 and the ticket is closed."
    with (
        ModelServer(default=Reply(answer)) as model,
        serving(
            tmp_path,
            RECAP_CHAT_MODEL="openai:chatty",
            RECAP_LLM_URL=model.url,
            RECAP_EMBEDDED_WORKER="false",
        ) as url,
        watched(browser, viewport=DESKTOP) as w,
    ):
        page = w.page
        page.goto(url)
        expect(page.locator("#composer-note")).to_contain_text("chatty answers")
        expect(page.locator("#role")).to_be_hidden()
        session = new_session(page)
        earlier = [m for n in range(3) for m in turn(n)]  # under the threshold: nothing due
        httpx.post(f"{url}/sessions/{session}/messages", json={"messages": earlier})
        page.locator(f'#sessions li[data-id="{session}"] .open').click()  # reopen: shows them
        answers = page.locator('#record > .message[data-role="assistant"]')
        for n, question in enumerate(("Was invoice 1007 paid?", "And the ticket?")):
            before = 3 + n  # the earlier turns' answers, then the chat's
            expect(answers).to_have_count(before)
            page.locator("#message").fill(question)
            page.locator("#message").press("Enter")
            expect(answers).to_have_count(before + 1)
            expect(answers.last).to_contain_text(answer)
        streamed = [r for r in model.requests if r.body.get("stream") is True]
        assert len(streamed) == 2, "each answer was streamed"
        assert streamed[-1].body["messages"][-1] == {"role": "user", "content": "And the ticket?"}
        record = httpx.get(f"{url}/sessions/{session}/messages").json()["items"]
        assert [m["role"] for m in record][-4:] == ["user", "assistant", "user", "assistant"]
        page.click("#memory-button")
        page.click("#compact-now")
        card = page.locator("#record .summary-card")
        expect(card).to_have_count(1)
        summary = httpx.get(f"{url}/sessions/{session}/summaries").json()[0]
        expect(card).to_have_attribute("data-range", summary["episode_range"])
        assert summary["first_message_id"] == 1
        expect(page.locator("#memory details.chain-row")).to_have_count(1)
        expect(page.locator("#memory-note")).to_contain_text("Compacted: messages 1–")
        w.assert_no_errors()


def test_compact_now_with_nothing_to_fold_informs_and_an_empty_chain_says_so(
    browser: Browser, console: str
) -> None:
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(console)
        new_session(page)
        page.click("#memory-button")
        expect(page.locator("#chain .empty")).to_contain_text("No summaries yet")
        expect(page.locator("#chain .empty")).to_contain_text("2,000 chars")
        page.click("#compact-now")
        note = page.locator("#memory-note")
        expect(note).to_contain_text("Nothing to compact yet")
        expect(note).to_have_attribute("role", "status")  # information, not an alert
        expect(page.locator("#failure")).to_be_hidden()
        assert_accessible(page, "desktop: empty Session Memory")
        w.assert_no_errors()


MARKDOWN = """**Investigating:** invoice <img src=x onerror="window.injected=1"> for **Priya & co**
**Key findings:**
- paid on *3 May*; see `INV-1014` <script>window.injected=2</script>
- refund **<b>declined</b>**
  - nested: Zoë's card, 東京 branch
[8 May 2023]
### Next step
first line
second line
1. call the bank
2. close the ticket"""


def test_summary_markdown_is_rendered_and_never_injects_markup(
    browser: Browser, console: str
) -> None:
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(console)
        rendered = page.evaluate(
            """async (text) => {
                const { renderMarkdown } = await import("/static/markdown.js");
                const box = document.createElement("div");
                box.append(renderMarkdown(text));
                document.body.append(box);
                await new Promise((resolve) => setTimeout(resolve, 50));
                const pick = (s) => [...box.querySelectorAll(s)].map((e) => e.textContent);
                return {
                    tags: [...new Set([...box.querySelectorAll("*")].map((e) => e.localName))],
                    strong: pick("strong"), li: pick("li"), code: pick("code"), em: pick("em"),
                    nested: pick("li > ul > li"), ol: pick("ol > li"), h: pick("h6"),
                    group: pick("p.group"), breaks: box.querySelectorAll("p br").length,
                    text: box.textContent, injected: window.injected ?? null,
                };
            }""",
            MARKDOWN,
        )
        assert set(rendered["tags"]) <= {"p", "strong", "em", "code", "ul", "ol", "li", "br", "h6"}
        assert rendered["injected"] is None
        assert '<img src=x onerror="window.injected=1">' in rendered["text"]
        assert "<script>window.injected=2</script>" in rendered["text"]
        assert "**" not in rendered["text"] and "`" not in rendered["text"]
        assert rendered["strong"] == [
            "Investigating:",
            "Priya & co",
            "Key findings:",
            "<b>declined</b>",
        ]
        assert rendered["em"] == ["3 May"] and rendered["code"] == ["INV-1014"]
        assert rendered["nested"] == ["nested: Zoë's card, 東京 branch"]
        assert len(rendered["li"]) == 5 and rendered["ol"] == ["call the bank", "close the ticket"]
        assert rendered["h"] == ["Next step"] and rendered["group"] == ["[8 May 2023]"]
        assert rendered["breaks"] == 2  # heading line + text, and first/second line
        w.assert_no_errors()


def test_the_session_list_stays_current_and_keeps_the_keyboards_place(
    browser: Browser, console: str, api: httpx.Client
) -> None:
    session = api.post("/sessions", json={"title": "Kept current"}).json()["id"]
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.clock.install()  # the page's timers and Date move when the test says
        page.goto(console)
        item = page.locator(f'#sessions li[data-id="{session}"]')
        expect(item.locator("time")).to_have_text("just now")
        item.locator(".open").focus()
        arrived = api.post("/sessions", json={"title": "Arrived meanwhile"}).json()["id"]
        expect(page.locator(f'#sessions li[data-id="{arrived}"]')).to_have_count(0)
        page.clock.fast_forward("05:00")
        expect(page.locator(f'#sessions li[data-id="{arrived}"]')).to_be_visible()
        expect(item.locator("time")).to_have_text("5 min ago")
        focused = page.evaluate(
            "[document.activeElement.closest('li')?.dataset.id, document.activeElement.className]"
        )
        assert focused == [session, "open"], "a refresh moved the keyboard's focus"
        w.assert_no_errors()


def test_the_address_names_the_view_so_a_reload_or_a_link_lands_there(
    browser: Browser, console: str, api: httpx.Client
) -> None:
    session = api.post("/sessions", json={"title": "Linked from a ticket"}).json()["id"]
    api.post(f"/sessions/{session}/messages", json={"messages": turn(4, size=80)})
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.goto(f"{console}/#session/{session}")  # a link someone shared
        expect(page.locator("#session-title")).to_have_text("Linked from a ticket")
        expect(page.locator("#record .message")).to_have_count(2)
        assert page.title() == "Linked from a ticket · recap"
        page.click("#tab-dashboard")
        assert page.url.endswith("#dashboard")
        page.reload()
        expect(page.locator("#dashboard")).to_be_visible()
        page.go_back()  # the browser's Back returns to the session
        expect(page.locator("#chat-view")).to_be_visible()
        expect(page.locator("#session-title")).to_have_text("Linked from a ticket")
        api.delete(f"/sessions/{session}")
        page.reload()
        expect(page.locator("#failure")).to_contain_text("could not be opened")
        expect(page.locator("#welcome")).to_be_visible()
        w.assert_no_errors(allowed=("status of 404",))


def test_a_service_that_stops_answering_is_said_plainly_and_cleared(
    browser: Browser, console: str
) -> None:
    with watched(browser, viewport=DESKTOP) as w:
        page = w.page
        page.clock.install()
        page.goto(console)
        expect(page.locator("#sessions li").first).to_be_visible()
        page.route("**/sessions?limit=*", lambda route: route.abort())  # no answer at all
        page.clock.fast_forward("00:31")
        failure = page.locator("#failure")
        expect(failure).to_have_text(
            "The service is not answering; the console tries again every 30 s."
        )
        page.unroute("**/sessions?limit=*")
        page.clock.fast_forward("00:31")
        expect(failure).to_be_hidden()
        w.assert_no_errors(allowed=("net::ERR_FAILED",))
