"""``recap serve``, ``recap worker`` and ``recap migrate``: the memory service's processes."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer
import uvicorn
from pydantic import ValidationError

from recap.cli import logs
from recap.cli.errors import describe, fail
from recap.compactor import Compactor
from recap.configured import configured_compactor
from recap.errors import RecapError
from recap.llm.spec import make_model
from recap.service import ServiceSettings, build_state, create_app, load_service_settings
from recap.service.app import redacted as _redacted
from recap.settings import LLMSettings, SummarizationSettings
from recap.store import migrate as migrate_schema
from recap.store import schema_status


def _configured(*, serving: bool = False, **overrides: object) -> tuple[ServiceSettings, Compactor]:
    """Every setting checked, and the database reached and migrated, before anything
    starts: one clear line and exit 2 otherwise."""
    try:
        settings = load_service_settings(**overrides)
        settings.tenants()  # API keys well formed
        if serving:
            settings.check_bind(settings.host)
        policy = SummarizationSettings().policy()
        compactor = configured_compactor(policy, LLMSettings(), strategy=settings.strategy)
        if settings.chat_model:
            make_model(LLMSettings(), spec=settings.chat_model)  # a bad spec stops start-up
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


def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on (env RECAP_HOST)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (env RECAP_PORT)")] = None,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Debug logging")] = False,
) -> None:
    """Run the memory service (HTTP API, docs at /docs, background compaction)."""
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings, compactor = _configured(serving=True, **overrides)
    logs.configure(verbose=True, level="DEBUG" if verbose else "INFO")
    print(
        f"recap: serving on http://{settings.host}:{settings.port} (API docs at /docs); "
        f"database {_redacted(settings.database_url)}; summarizer {compactor.summarizer.name}",
        flush=True,
    )
    app = create_app(settings, compactor=compactor)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level="debug" if verbose else "warning",
        timeout_graceful_shutdown=10,
    )


def worker(
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Debug logging")] = False,
) -> None:
    """Compact due sessions of RECAP_DATABASE_URL until stopped (SIGTERM finishes the
    compaction in flight)."""
    settings, compactor = _configured()
    logs.configure(verbose=True, level="DEBUG" if verbose else "INFO")
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
    """Upgrade the schema of RECAP_DATABASE_URL to this version of recap."""
    settings, _ = _configured(migrate_on_start=True)
    print(f"recap: database {_redacted(settings.database_url)} is at the newest schema")
