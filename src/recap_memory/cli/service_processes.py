"""The memory service's processes behind ``recap serve``, ``worker`` and ``migrate``
(imported only when one of them runs: it needs the ``[server]`` extra)."""

from __future__ import annotations

import asyncio
import errno
import signal
import socket

import uvicorn
from pydantic import ValidationError

from recap_memory.cli import logs
from recap_memory.cli.errors import describe, fail
from recap_memory.compactor import Compactor
from recap_memory.configured import configured_compactor
from recap_memory.errors import RecapError
from recap_memory.llm.spec import make_model
from recap_memory.service import ServiceSettings, build_state, create_app, load_service_settings
from recap_memory.service.app import redacted as _redacted
from recap_memory.service.server import Server
from recap_memory.settings import LLMSettings, SummarizationSettings, load_settings
from recap_memory.store import migrate as migrate_schema
from recap_memory.store import schema_status
from recap_memory.store.filelocks import hold_database

_HELD: list[object] = []
"""The lock on the SQLite file this process serves, kept until it exits."""


def _configured(
    *, serving: bool = False, command: str | None = None, **overrides: object
) -> tuple[ServiceSettings, Compactor]:
    """Every setting checked, and the database reached and migrated, before anything
    starts: one clear line and exit 2 otherwise. A ``command`` (serve, worker) that writes
    a SQLite file first makes this process the one that serves it."""
    try:
        settings = load_service_settings(**overrides)
        settings.tenants()  # API keys well formed
        if serving:
            settings.check_bind(settings.host)
        if command is not None:
            _HELD.append(hold_database(settings.database_url, command))
        summarization = load_settings(SummarizationSettings)
        llm = load_settings(LLMSettings)
        compactor = configured_compactor(
            summarization.policy(), llm, strategy=summarization.strategy
        )
        if settings.chat_model:
            make_model(llm, spec=settings.chat_model)  # a bad spec stops start-up
    except (RecapError, ValidationError) as exc:
        fail(describe(exc))
    where = _redacted(settings.database_url)
    try:
        if settings.migrate_on_start:
            asyncio.run(migrate_schema(settings.database_url))
        status = asyncio.run(schema_status(settings.database_url))
    except Exception as exc:  # the database itself: unreachable, refused, not a database
        fail(f"could not open the database {where}: {describe(exc).splitlines()[0]}")
    if not status.up_to_date:
        fail(
            f"the database {where} has schema {status.current or 'none'}, this recap needs "
            f"{status.head}: run `recap migrate` (or set RECAP_MIGRATE_ON_START=true)"
        )
    # migrated (or found current) here: the app only verifies it, instead of migrating again
    return settings.model_copy(update={"migrate_on_start": False}), compactor


def serve(*, host: str | None, port: int | None, verbose: bool) -> None:
    """Run the memory service until stopped."""
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    logs.configure(verbose=True, level="DEBUG" if verbose else "INFO", service=True)
    settings, compactor = _configured(serving=True, command="serve", **overrides)
    listening = _listen(settings.host, settings.port)
    print(
        f"recap: serving on http://{settings.host}:{listening.getsockname()[1]} (API docs at "
        f"/docs); database {_redacted(settings.database_url)}; summarizer "
        f"{compactor.summarizer.name}",
        flush=True,
    )
    app = create_app(settings, compactor=compactor)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="debug" if verbose else "warning",
        timeout_graceful_shutdown=10,
    )
    Server(config, app).run(sockets=[listening])


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything says "serving": a port in use (or an
    address this machine does not have) is one line naming the setting to change."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        fail(f"cannot listen on {host!r}: {exc.strerror}; set --host or RECAP_HOST")
    family, kind, proto, _, address = infos[0]
    listening = socket.socket(family, kind, proto)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind(address)
        listening.listen(2048)
    except OSError as exc:
        listening.close()
        if exc.errno == errno.EADDRINUSE:
            fail(
                f"port {port} on {host} is already in use: stop what holds it, or choose "
                "another with --port or RECAP_PORT"
            )
        fail(
            f"cannot listen on {host}:{port}: {exc.strerror}; "
            "set --host/--port or RECAP_HOST/RECAP_PORT"
        )
    listening.set_inheritable(True)
    return listening


def worker(*, verbose: bool) -> None:
    """Compact due sessions until stopped (SIGTERM finishes the compaction in flight)."""
    logs.configure(verbose=True, level="DEBUG" if verbose else "INFO", service=True)
    settings, compactor = _configured(command="worker")
    asyncio.run(_work(settings, compactor))


async def _work(settings: ServiceSettings, compactor: Compactor) -> None:
    state = await build_state(settings, compactor=compactor, worker=True)
    assert state.worker is not None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"recap: worker {state.runner.owner} compacting due sessions", flush=True)
    state.worker.start()
    try:
        await stop.wait()
    finally:
        await state.worker.stop(grace_s=settings.shutdown_grace_s)
        await state.store.close()
        print(f"recap: worker {state.runner.owner} stopped", flush=True)


def migrate() -> None:
    """Upgrade the schema of the configured database to this version of recap."""
    settings, _ = _configured(migrate_on_start=True)
    print(f"recap: database {_redacted(settings.database_url)} is at the newest schema")
