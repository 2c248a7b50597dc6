"""Fixtures of the service tests: a fresh database on SQLite and on the real PostgreSQL,
and the app over httpx's ASGI transport with its lifespan running."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from recap_memory.clock import Clock, utcnow
from recap_memory.compactor import Compactor
from recap_memory.llm.base import ChatModel
from recap_memory.service import ServiceSettings, create_app
from recap_memory.settings import SummarizationSettings

POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
SMALL = SummarizationSettings(threshold_chars=2_000, keep_chars=600)
"""A policy small enough that a few messages make a session due."""
LOOPBACK_URL = "http://127.0.0.1:8000"
"""Where the in-process clients say they are (a loopback Host, as a local client sends:
without API keys the service refuses other host names)."""


def postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database on this machine (dropped afterwards). Fails, never
    skips, when PostgreSQL is unreachable: it is part of the test environment."""
    name = f"recap_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Every store test runs on a SQLite file and on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'recap.db'}"
    else:
        yield from postgres_database()


def service_settings(database_url: str, **overrides: Any) -> ServiceSettings:
    """Settings for a test app: its own database, a fast worker poll, short retries."""
    values: dict[str, Any] = {
        "database_url": database_url,
        "poll_interval_s": 0.05,
        "retry_base_s": 0.2,
        "lease_s": 5.0,
        "summarize_processes": 0,  # a thread: no process spawned per test app
        **overrides,
    }
    return ServiceSettings(**values)


class App:
    """A running app and a client for it."""

    def __init__(self, app: Any, client: httpx.AsyncClient) -> None:
        self.app = app
        self.client = client

    @property
    def state(self) -> Any:
        """The service state (store, runner, bus, worker)."""
        return self.app.state.recap

    async def session(self, **body: Any) -> str:
        """Create a session; its id."""
        response = await self.client.post("/sessions", json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    async def append(self, session: str, *messages: dict[str, Any]) -> list[int]:
        """Append messages; their ids."""
        response = await self.client.post(
            f"/sessions/{session}/messages", json={"messages": list(messages)}
        )
        assert response.status_code == 201, response.text
        return list(response.json()["ids"])


async def running_app(
    database_url: str,
    *,
    compactor: Compactor | None = None,
    summarization: SummarizationSettings = SMALL,
    headers: dict[str, str] | None = None,
    chat_model: ChatModel | None = None,
    clock: Clock = utcnow,
    **overrides: Any,
) -> AsyncIterator[App]:
    """The app with its lifespan (migrations, worker) running, and an ASGI client."""
    app = create_app(
        service_settings(database_url, **overrides),
        compactor=compactor,
        summarization=summarization,
        chat_model=chat_model,
        clock=clock,
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url=LOOPBACK_URL, headers=headers or {}
        ) as client:
            yield App(app, client)


@pytest.fixture
async def service(database_url: str) -> AsyncIterator[App]:
    """The app on both databases with the embedded worker and the extractive summarizer."""
    async for app in running_app(database_url):
        yield app


def turn(n: int, size: int = 300) -> list[dict[str, Any]]:
    """One user/assistant exchange with distinct facts, ``size`` characters each side."""
    facts = [
        f"ticket {n}-{k} concerns invoice {1000 + 7 * n + k} for customer {chr(65 + k % 26)}{n}"
        for k in range(8)
    ]
    question = (f"Question {n}: " + " and ".join(facts[:4]))[:size]
    answer = (f"Answer {n}: " + "; ".join(facts[4:]) + f". Resolved at step {n * 3}.")[:size]
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
