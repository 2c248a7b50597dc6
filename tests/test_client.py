"""The Python client (:mod:`recap_memory.client`) against the real service: in process over
httpx's ASGI transport (the blocking client through a small bridge to the app's loop), and
against a real ``recap serve`` on loopback with API keys for the live events."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from benchmarks.processes import serving
from recap_memory.client import (
    AsyncClient,
    Busy,
    Client,
    Conflict,
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    OtherEvent,
    RecapAPIError,
    RecapConnectionError,
    Retry,
    SessionState,
    SummarizationFinished,
    SummarizationStarted,
    TooLarge,
    Unauthorized,
)
from recap_memory.compactor import Compactor
from recap_memory.messages import Message
from recap_memory.summarizers import ExtractiveSummarizer, FoldRequest
from recap_memory.summarizers.base import Fold
from tests.conftest import ROOT
from tests.service.conftest import LOOPBACK_URL, App, running_app, turn
from tests.service.processes import recap_env

T = TypeVar("T")
FAST = Retry(attempts=3, backoff_s=0.01)
KEYS = "key-acme:acme,key-beta:beta"


# --- in process: the app, the async client, and a bridge for the blocking client ----------


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    """The app on a SQLite file, its lifespan (migrations, worker) running."""
    async for running in running_app(f"sqlite:///{tmp_path / 'recap.db'}"):
        yield running


def async_client(app: App, transport: httpx.AsyncBaseTransport | None = None, **kw: Any):
    """An :class:`AsyncClient` of ``app`` over the ASGI transport (or ``transport``)."""
    transport = transport or httpx.ASGITransport(app=app.app)
    return AsyncClient(LOOPBACK_URL, transport=transport, retry=FAST, **kw)


class LoopThread:
    """An event loop in a thread: the app lives there while a blocking client calls it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop; its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    def stop(self) -> None:
        """Stop the loop and its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class BlockingASGI(httpx.BaseTransport):
    """httpx's ASGI transport for a blocking client: each request runs on the app's loop."""

    def __init__(self, app: Any, loop: LoopThread) -> None:
        self.asgi = httpx.ASGITransport(app=app)
        self.loop = loop

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        async def send() -> httpx.Response:
            response = await self.asgi.handle_async_request(request)
            body = b"".join([chunk async for chunk in response.stream])  # type: ignore[union-attr]
            return httpx.Response(response.status_code, headers=response.headers, content=body)

        return self.loop.run(send())


@pytest.fixture
def blocking(tmp_path: Path) -> Iterator[tuple[App, BlockingASGI]]:
    """The app running on its own loop in a thread, and a transport to it."""
    loop = LoopThread()
    running = running_app(f"sqlite:///{tmp_path / 'recap.db'}")
    app = loop.run(running.__anext__())
    try:
        yield app, BlockingASGI(app.app, loop)
    finally:
        loop.run(running.aclose())
        loop.stop()


class LosesAnswers(httpx.AsyncBaseTransport, httpx.BaseTransport):
    """Forwards every request, but the first ``lose`` answers to a POST are lost on the way
    back (a reset connection): the write happened, the client saw an error."""

    def __init__(self, inner: Any, lose: int = 1, answer: httpx.Response | None = None) -> None:
        self.inner = inner
        self.lose = lose
        self.answer = answer
        self.posts: list[httpx.Request] = []
        self.replayed: list[bool] = []

    def _after(self, request: httpx.Request, response: httpx.Response) -> httpx.Response:
        if request.method != "POST":
            return response
        self.posts.append(request)
        self.replayed.append(response.headers.get("idempotent-replayed") == "true")
        if len(self.posts) > self.lose:
            return response
        if self.answer is not None:
            return self.answer
        raise httpx.ReadError("connection reset by peer", request=request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        await response.aread()
        return self._after(request, response)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._after(request, self.inner.handle_request(request))


# --- the main flow -------------------------------------------------------------------------


def test_the_blocking_client_main_flow(blocking: tuple[App, BlockingASGI]) -> None:
    _, transport = blocking
    with Client(LOOPBACK_URL, transport=transport, retry=FAST) as recap:
        session = recap.create_session(title="support", metadata={"team": "billing"})
        assert session.title == "support" and session.metadata == {"team": "billing"}
        first = recap.append(session.id, turn(0, size=150))  # short: never due
        second = recap.append(session.id, [Message(role="user", content="and invoice 1007?")])
        assert len(first.ids) == 2 and len(second.ids) == 1 and second.ids[0] > first.ids[-1]
        page = recap.messages(session.id, limit=2)
        assert [m["id"] for m in page.items] == first.ids and page.next_after == first.ids[-1]
        everything = list(recap.iter_messages(session.id, page_size=2))
        assert [m["content"] for m in everything][-1] == "and invoice 1007?"
        for n in range(1, 4):
            recap.append(session.id, turn(n, size=150))
        compacted = recap.compact(session.id)
        assert compacted.summary is not None
        rows = recap.summaries(session.id)
        assert [r.episode_range for r in rows] == [compacted.summary.episode_range]
        context = recap.context(session.id, max_chars=4_000)
        assert context.chars <= 4_000 and context.summary_rows == 1
        assert context.messages[0]["content"] == rows[0].content or context.ids[0] is None
        assert recap.episode_stats(session.id).count == 9
        assert recap.stats().summary["sessions_compacted"] == 1
        assert [s.id for s in recap.list_sessions(limit=5).items] == [session.id]
        recap.delete_session(session.id)
        with pytest.raises(NotFound):
            recap.get_session(session.id)


async def test_the_async_client_main_flow(app: App) -> None:
    async with async_client(app) as recap:
        session = await recap.create_session(title="async")
        for n in range(6):
            await recap.append(session.id, turn(n))  # due: over the small test threshold
        context = await recap.context(session.id, compact_sync=True)
        assert context.summarized_through is not None and context.summary_rows >= 1
        rows = await recap.summaries(session.id, include_superseded=True)
        assert rows and rows[0].episode_range.startswith("1-")
        listed = [m async for m in recap.iter_messages(session.id, page_size=3)]
        assert len(listed) == 12, "the raw record keeps every message"
        assert (await recap.get_session(session.id)).message_count == 12
        assert (await recap.stats()).summary["total_summarizations"] >= 1
        await recap.delete_session(session.id)
        assert (await recap.list_sessions()).total == 0


# --- retries write once ---------------------------------------------------------------------


def test_an_append_whose_answer_was_lost_is_written_once(
    blocking: tuple[App, BlockingASGI],
) -> None:
    _, transport = blocking
    losing = LosesAnswers(transport)
    with Client(LOOPBACK_URL, transport=losing, retry=FAST) as recap:
        session = Client(LOOPBACK_URL, transport=transport).create_session()
        appended = recap.append(session.id, turn(0))
        record = recap.messages(session.id).items
    assert [m["id"] for m in record] == appended.ids, "written once"
    keys = {p.headers["idempotency-key"] for p in losing.posts}
    assert len(losing.posts) == 2 and len(keys) == 1, "the retry carried the same key"
    assert losing.replayed == [False, True], "the service replayed its first answer"


async def test_async_retries_after_a_lost_answer_or_outcome_unknown(app: App) -> None:
    asgi = httpx.ASGITransport(app=app.app)
    lost = LosesAnswers(asgi, lose=2)
    async with async_client(app, lost) as recap:
        session = await recap.create_session(title="once")
    unknown = httpx.Response(
        503,
        json={"error": {"code": "outcome_unknown", "message": "the commit's answer was lost"}},
        headers={"Retry-After": "0"},
    )
    unsure = LosesAnswers(asgi, answer=unknown)
    async with async_client(app, unsure) as recap:
        appended = await recap.append(session.id, turn(0), idempotency_key="mine-1")
        page = await recap.messages(session.id)
        assert (await recap.list_sessions()).total == 1, "the session was created once"
    assert [m["id"] for m in page.items] == appended.ids
    assert [p.headers["idempotency-key"] for p in unsure.posts] == ["mine-1", "mine-1"]
    assert lost.replayed == [False, True, True] and unsure.replayed == [False, True]


async def test_a_compaction_is_never_resent_and_no_answer_is_a_connection_error(
    app: App,
) -> None:
    lost = LosesAnswers(httpx.ASGITransport(app=app.app), lose=5)
    async with async_client(app) as recap:
        session = await recap.create_session()
    async with async_client(app, lost) as recap:
        with pytest.raises(RecapConnectionError, match="ReadError"):
            await recap.compact(session.id)
        assert len(lost.posts) == 1, "a second pass is another pass: not resent"
        with pytest.raises(RecapConnectionError, match="3 attempts"):
            await recap.append(session.id, turn(0))
    async with AsyncClient("http://127.0.0.1:9", retry=FAST) as nowhere:
        with pytest.raises(RecapConnectionError, match="no answer from the recap service"):
            await nowhere.stats()


# --- errors carry the API's code ------------------------------------------------------------


async def test_errors_are_exceptions_with_the_api_code(app: App) -> None:
    async with async_client(app) as recap:
        with pytest.raises(NotFound) as missing:
            await recap.context("no-such-session")
        assert missing.value.status == 404 and missing.value.code == "not_found"
        session = await recap.create_session()
        with pytest.raises(InvalidRequest) as empty:
            await recap.append(session.id, [])
        assert empty.value.status == 422 and empty.value.code == "invalid_request"
        assert empty.value.details[0]["field"] == "body.messages"
        with pytest.raises(InvalidRequest) as orphan:
            await recap.append(session.id, [{"role": "tool", "tool_call_id": "x", "content": ""}])
        assert orphan.value.code == "invalid_messages"
        await recap.append(session.id, [{"role": "user", "content": "a", "id": "m1"}])
        with pytest.raises(Conflict) as conflict:
            await recap.append(session.id, [{"role": "user", "content": "b", "id": "m1"}])
        assert conflict.value.status == 409 and conflict.value.code == "conflict"
        await recap.append(session.id, turn(0), idempotency_key="k")
        with pytest.raises(IdempotencyKeyReused):
            await recap.append(session.id, turn(1), idempotency_key="k")
        with pytest.raises(TooLarge) as too_large:
            await recap.context(session.id, max_chars=5)
        assert too_large.value.status == 413 and too_large.value.code == "context_too_large"


class Gated(ExtractiveSummarizer):
    """The extractive summarizer, held until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def fold(self, request: FoldRequest) -> Fold:
        self.entered.set()
        await self.gate.wait()
        return await super().fold(request)


async def test_busy_while_a_pass_holds_the_session(tmp_path: Path) -> None:
    summarizer = Gated()
    compactor = Compactor(summarizer, fallback=None)
    async for app in running_app(f"sqlite:///{tmp_path / 'r.db'}", compactor=compactor):
        async with async_client(app) as recap:
            session = await recap.create_session()
            for n in range(4):  # 1,200 chars: not due, so the worker leaves it alone
                await recap.append(session.id, turn(n, size=150))
            first = asyncio.create_task(recap.compact(session.id))
            await asyncio.wait_for(summarizer.entered.wait(), 10)
            with pytest.raises(Busy) as busy:
                await recap.compact(session.id)
            assert busy.value.status == 409 and busy.value.code == "busy"
            assert busy.value.retry_after == 1.0
            summarizer.gate.set()
            await first


async def test_unauthorized_without_the_tenants_key(tmp_path: Path) -> None:
    async for app in running_app(f"sqlite:///{tmp_path / 'r.db'}", api_keys=KEYS):
        async with async_client(app) as anonymous:
            with pytest.raises(Unauthorized) as denied:
                await anonymous.list_sessions()
        assert denied.value.status == 401 and denied.value.code == "unauthorized"
        async with async_client(app, api_key="wrong") as wrong:
            with pytest.raises(Unauthorized):
                await wrong.create_session()
        async with async_client(app, api_key="key-acme") as acme:
            session = await acme.create_session(title="acme's")
        async with async_client(app, api_key="key-beta") as beta:
            with pytest.raises(NotFound):
                await beta.get_session(session.id)


def test_an_error_body_that_is_not_the_apis_still_says_what_happened() -> None:
    page = httpx.Response(502, text="<html>Bad Gateway from the proxy</html>")
    mock = httpx.MockTransport(lambda _: page)
    with Client(transport=mock) as recap, pytest.raises(RecapAPIError) as error:
        recap.stats()
    assert error.value.status == 502 and error.value.code == "http_502"
    assert "Bad Gateway from the proxy" in str(error.value)


# --- events from Server-Sent Events ---------------------------------------------------------

STREAM = b"""event: session.state
data: {"id": "s1", "title": null, "metadata": {}, "created_at": "2026-01-01T00:00:00Z", \
"updated_at": "2026-01-01T00:00:00Z", "message_count": 0, "char_count": 0, "token_count": 0, \
"context_chars": 0, "context_tokens": 0, "summarized_through": null, "due": false, \
"compacting": false, "failures": 0, "last_error": null}

: ping

event: summarization.started
data: {"session_id": "s1"}

event: something.new
data: {"session_id": "s1",
data:  "n": 1}

"""


def test_events_are_typed_from_the_stream_in_both_clients() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/sessions/s1/events"
        return httpx.Response(200, content=STREAM, headers={"content-type": "text/event-stream"})

    with Client(transport=httpx.MockTransport(answer)) as recap:
        events = list(recap.events("s1"))

    async def read() -> list[Any]:
        async with AsyncClient(transport=httpx.MockTransport(answer)) as recap:
            return [e async for e in recap.events("s1")]

    assert asyncio.run(read()) == events
    state, started, new = events
    assert isinstance(state, SessionState) and state.session.id == "s1"
    assert isinstance(started, SummarizationStarted) and started.session_id == "s1"
    assert isinstance(new, OtherEvent) and new.data == {"session_id": "s1", "n": 1}


def test_events_of_an_unknown_session_raise_not_found() -> None:
    missing = httpx.Response(404, json={"error": {"code": "not_found", "message": "no s9"}})
    mock = httpx.MockTransport(lambda _: missing)
    with Client(transport=mock) as recap, pytest.raises(NotFound, match="no s9"):
        next(recap.events("s9"))


# --- against a real `recap serve` with API keys ---------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``recap serve`` on a free loopback port with two tenants' keys; its URL."""
    folder = tmp_path_factory.mktemp("serve")
    env = recap_env(f"sqlite:///{folder / 'recap.db'}", RECAP_API_KEYS=KEYS)
    log = folder / "serve.log"
    with serving(env, log, cwd=folder) as (url, _):
        yield url
    assert "Traceback" not in log.read_text()


def test_the_client_against_recap_serve_with_api_keys(server: str) -> None:
    with Client(server, api_key="key-acme", timeout=30) as recap:
        session = recap.create_session(title="live")
        events = recap.events(session.id)
        state = next(events)
        assert isinstance(state, SessionState) and state.session.id == session.id
        for n in range(12):
            recap.append(session.id, turn(n))
        seen = []
        for event in events:
            seen.append(event)
            if event.event in ("summarization.finished", "summarization.failed"):
                break
        events.close()
        assert isinstance(seen[0], SummarizationStarted)
        finished = seen[-1]
        assert isinstance(finished, SummarizationFinished), seen
        assert finished.model_extra == {}, "the client's model has every field the service sent"
        assert finished.context.chars_after < finished.context.chars_before
        context = recap.context(session.id, max_tokens=2_000)
        assert context.tokens <= 2_000 and context.summarized_through is not None
        ranges = [r.episode_range for r in recap.summaries(session.id, include_superseded=True)]
        assert finished.summary.episode_range in ranges
        assert recap.stats().summary["sessions_compacted"] == 1
        with Client(server, api_key="key-beta") as beta, pytest.raises(NotFound):
            beta.get_session(session.id)
        with Client(server) as anonymous, pytest.raises(Unauthorized):
            anonymous.get_session(session.id)
        recap.delete_session(session.id)
        with pytest.raises(NotFound):
            recap.get_session(session.id)


async def test_the_async_client_hears_a_compaction_from_recap_serve(server: str) -> None:
    async with AsyncClient(server, api_key="key-beta", timeout=30) as recap:
        session = await recap.create_session()
        events = recap.events(session.id)
        assert isinstance(await anext(events), SessionState)
        for n in range(12):
            await recap.append(session.id, turn(n))
        async for event in events:
            if event.event in ("summarization.finished", "summarization.failed"):
                break
        await events.aclose()
        assert isinstance(event, SummarizationFinished), event
        rows = await recap.summaries(session.id)
        assert rows and (await recap.get_session(session.id)).summarized_through is not None


def test_the_example_runs_against_recap_serve(server: str) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "service_client.py"), "--url", server,
         "--api-key", "key-acme"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "event summarization.finished" in run.stdout, run.stdout
    assert "folded into a summary" in run.stdout and "\nsummary " in run.stdout, run.stdout
