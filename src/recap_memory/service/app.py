"""The FastAPI application: built by :func:`create_app`, its engine made in the lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import gc
import logging
import multiprocessing
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recap_memory import __version__
from recap_memory.clock import Clock, utcnow
from recap_memory.compactor import Compactor
from recap_memory.configured import configured_compactor
from recap_memory.errors import ConfigurationError
from recap_memory.llm.base import ChatModel
from recap_memory.llm.spec import make_model
from recap_memory.logcontext import log_context
from recap_memory.service.compaction import Backoff, CompactionRunner
from recap_memory.service.deps import ServiceState
from recap_memory.service.errors import install_error_handlers
from recap_memory.service.events import EventBus
from recap_memory.service.hosts import HostGuard
from recap_memory.service.limits import BodyLimit
from recap_memory.service.metrics import Metrics
from recap_memory.service.proxy import routes as proxy
from recap_memory.service.proxy.upstream import Upstream
from recap_memory.service.relay import PostgresRelay
from recap_memory.service.routes import console, context, events, sessions, system
from recap_memory.service.settings import ServiceSettings, load_service_settings
from recap_memory.service.worker import Worker
from recap_memory.service.writes import WriteGuard
from recap_memory.settings import LLMSettings, SummarizationSettings, load_settings
from recap_memory.store import Store, migrate, open_engine, schema_status
from recap_memory.store.owners import is_orphaned
from recap_memory.store.urls import is_sqlite
from recap_memory.web import mount_console

log = logging.getLogger("recap_memory.service")
LISTEN_WAIT_S = 5.0
"""How long start-up waits for the event listener before serving anyway."""


async def build_state(
    settings: ServiceSettings,
    *,
    compactor: Compactor | None = None,
    model: ChatModel | None = None,
    summarization: SummarizationSettings | None = None,
    llm: LLMSettings | None = None,
    worker: bool | None = None,
    chat_model: ChatModel | None = None,
    clock: Clock = utcnow,
) -> ServiceState:
    """Open the database (migrating it, or refusing an outdated one) and build the engine.
    ``clock`` is what "now" is for leases and backoff (tests move a manual one)."""
    if settings.migrate_on_start:
        await migrate(settings.database_url)
    else:
        status = await schema_status(settings.database_url)
        if not status.up_to_date:
            raise ConfigurationError(
                f"the database schema is at {status.current or 'nothing'}, this recap needs "
                f"{status.head}: run `recap migrate` first"
            )
    summarization = summarization or load_settings(SummarizationSettings)
    policy = summarization.policy().model_copy(
        update={"mask_oversized_turn": False}
    )  # the store keeps messages
    if compactor is None:
        compactor = configured_compactor(policy, llm, model=model, strategy=summarization.strategy)
    else:
        compactor = compactor.with_policy(policy)
    pool = summarizing_pool(settings.summarize_processes)
    if pool is not None:
        compactor = compactor.running_on(pool)
    engine = open_engine(
        settings.database_url,
        pool_size=settings.pool_size,
        max_overflow=settings.max_overflow,
        pool_timeout_s=settings.pool_timeout_s,
    )
    store = Store(
        engine,
        policy,
        clock=clock,
        keys_kept_for=dt.timedelta(seconds=settings.idempotency_ttl_s),
    )
    if freed := await store.reclaim(is_orphaned):
        log.info("took back %d compaction lease(s) a crashed recap on this host held", freed)
    relay = (
        None if is_sqlite(settings.database_url) else PostgresRelay(settings.database_url, engine)
    )
    bus, metrics = EventBus(relay), Metrics()
    runner = CompactionRunner(
        store,
        compactor,
        bus,
        metrics,
        lease=dt.timedelta(seconds=settings.lease_s),
        backoff=Backoff(settings.retry_base_s, settings.retry_max_s),
    )
    embedded = settings.embedded_worker if worker is None else worker
    background = (
        Worker(
            runner,
            concurrency=settings.worker_concurrency,
            poll_interval_s=settings.poll_interval_s,
        )
        if embedded
        else None
    )
    if chat_model is None and settings.chat_model:
        chat_model = make_model(llm, spec=settings.chat_model)
    upstream = (
        Upstream(
            settings.upstream_url,
            api_key=(
                settings.upstream_api_key.get_secret_value() if settings.upstream_api_key else None
            ),
            pass_caller_key=not settings.tenants(),
            timeout_s=settings.upstream_timeout_s,
        )
        if settings.upstream_url
        else None
    )
    return ServiceState(
        settings, store, runner, bus, metrics, background, relay, chat_model, pool, upstream
    )


def summarizing_pool(processes: int) -> Executor | None:
    """A pool of ``processes`` fresh interpreters (spawned: the server's threads are not
    forked) for the summarizer's CPU work; None for 0."""
    if processes == 0:
        return None
    return ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))


def create_app(
    settings: ServiceSettings | None = None,
    *,
    compactor: Compactor | None = None,
    model: ChatModel | None = None,
    summarization: SummarizationSettings | None = None,
    llm: LLMSettings | None = None,
    chat_model: ChatModel | None = None,
    clock: Clock = utcnow,
) -> FastAPI:
    """The memory service. Settings come from the environment unless given; ``compactor``
    or ``model`` replace the configured summarizer (tests give a fake model), ``clock``
    the wall clock."""
    settings = settings or load_service_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = await build_state(
            settings,
            compactor=compactor,
            model=model,
            summarization=summarization,
            llm=llm,
            chat_model=chat_model,
            clock=clock,
        )
        app.state.recap = state
        listener = None
        if state.relay is not None:
            listener = asyncio.create_task(state.relay.listen(state.bus.deliver))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(state.relay.listening.wait(), LISTEN_WAIT_S)
        if state.worker is not None:
            state.worker.start()
        gc.freeze()  # what start-up built lives on: later full collections skip it
        log.info("recap service ready: %s", redacted(settings.database_url))
        try:
            yield
        finally:
            state.bus.close()
            if state.worker is not None:
                await state.worker.stop(grace_s=settings.shutdown_grace_s)
            await state.runner.stop()
            if listener is not None:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listener
            await state.store.close()
            if state.upstream is not None:
                await state.upstream.aclose()
            if state.pool is not None:  # waited for: a pool left running breaks at exit
                await asyncio.to_thread(state.pool.shutdown, wait=True, cancel_futures=True)

    app = FastAPI(
        title="recap memory service",
        version=__version__,
        summary="Sessions, messages and rolling summaries that keep conversations in budget.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    for router in (
        sessions.router,
        context.router,
        events.router,
        system.router,
        console.router,
        proxy.router,
    ):
        app.include_router(router)
    mount_console(app)
    # the first added runs last: Observe, HostGuard, CORS, WriteGuard, BodyLimit, the app
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(
        WriteGuard,
        check_origin=not settings.tenants(),
        trusted_origins=settings.cors_origin_list(),
    )
    if settings.cors_origin_list():
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origin_list(),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "X-Request-ID"],
            expose_headers=["X-Request-ID", "Retry-After"],
        )
    app.add_middleware(HostGuard, allowed=settings.host_allow_list())
    app.add_middleware(Observe)
    return app


def stop_streams(app: FastAPI) -> None:
    """End the app's open event streams now: on SIGTERM, before the server waits for its
    connections to close (they would otherwise hold the shutdown up to its timeout)."""
    state: ServiceState | None = getattr(app.state, "recap", None)
    if state is not None:
        state.bus.close()


class Observe:
    """ASGI middleware: a request id for every request (``X-Request-ID``, echoed back)
    and its duration in the metrics, by route template and status."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        request_id = headers.get(b"x-request-id", b"").decode("latin-1") or uuid.uuid4().hex[:8]
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", request_id.encode("latin-1")),
                ]
            await send(message)

        try:
            with log_context(request=request_id):
                await self.app(scope, receive, send_with_id)
        finally:
            state: ServiceState | None = getattr(scope["app"].state, "recap", None)
            if state is not None:
                route = getattr(scope.get("route"), "path", "unmatched")
                elapsed = time.perf_counter() - started
                state.metrics.requests.labels(scope["method"], route, str(status)).observe(elapsed)


def redacted(url: str) -> str:
    """``url`` without its password, for logs."""
    scheme, sep, rest = url.partition("://")
    if "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.partition(":")[0]
    return f"{scheme}{sep}{user}@{host}"
