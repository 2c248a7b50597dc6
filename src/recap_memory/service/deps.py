"""What routes depend on: the service state (built in the app's lifespan) and the tenant."""

from __future__ import annotations

import hmac
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from recap_memory.llm.base import ChatModel
from recap_memory.service.compaction import CompactionRunner
from recap_memory.service.events import EventBus
from recap_memory.service.metrics import Metrics
from recap_memory.service.proxy.prefixes import PrefixSummaries
from recap_memory.service.proxy.upstream import Upstream
from recap_memory.service.relay import PostgresRelay
from recap_memory.service.settings import ServiceSettings
from recap_memory.service.worker import Worker
from recap_memory.store import Store

DEFAULT_TENANT = "default"


@dataclass
class ServiceState:
    """Everything one running service holds; built in the lifespan, injected into routes."""

    settings: ServiceSettings
    store: Store
    runner: CompactionRunner
    bus: EventBus
    metrics: Metrics
    worker: Worker | None
    relay: PostgresRelay | None = None
    chat_model: ChatModel | None = None
    pool: Executor | None = None
    """The processes summarizing off the server's interpreter (shut down with it)."""
    upstream: Upstream | None = None
    """The model ``/v1/chat/completions`` forwards to (``RECAP_UPSTREAM_URL``)."""
    prefixes: PrefixSummaries = field(default_factory=PrefixSummaries)
    """Heads compacted for conversations sent whole (stateless ``/v1/chat/completions``)."""


async def get_state(request: Request) -> ServiceState:
    """The running service's state."""
    state: ServiceState = request.app.state.recap
    return state


State = Annotated[ServiceState, Depends(get_state)]


def bearer_key(request: Request) -> str | None:
    """The key of the request's ``Authorization: Bearer <key>`` header, if any."""
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    return key.strip() if scheme.lower() == "bearer" and key.strip() else None


def _same(known: str, given: str) -> bool:
    return hmac.compare_digest(known.encode(), given.encode())


async def get_tenant(request: Request, state: State) -> str:
    """The tenant of the request's API key (``default`` when no keys are configured)."""
    tenants = state.settings.tenants()
    if not tenants:
        return DEFAULT_TENANT
    key = bearer_key(request)
    if key is not None:
        for known, tenant in tenants.items():
            if _same(known, key):
                return tenant
    raise HTTPException(
        401,
        "missing or unknown API key: send Authorization: Bearer <key>",
        headers={"WWW-Authenticate": "Bearer"},
    )


async def require_admin(request: Request, state: State) -> None:
    """Let through the holder of ``RECAP_ADMIN_KEY``; anyone when neither it nor API keys
    are set (the service then answers loopback only). Tenants' keys are not enough: what
    is refused here is process-wide."""
    settings = state.settings
    admin = settings.admin_key.strip() if settings.admin_key else None
    if admin is None:
        if not settings.tenants():
            return
        raise HTTPException(
            403,
            "this route shows every tenant's figures and needs the admin key: set "
            "RECAP_ADMIN_KEY on the service and send Authorization: Bearer <admin key>",
        )
    key = bearer_key(request)
    if key is None or not _same(admin, key):
        raise HTTPException(
            401,
            "this route needs the admin key (RECAP_ADMIN_KEY): send Authorization: Bearer "
            "<admin key>; a tenant's key is not enough",
            headers={"WWW-Authenticate": "Bearer"},
        )


Tenant = Annotated[str, Depends(get_tenant)]
