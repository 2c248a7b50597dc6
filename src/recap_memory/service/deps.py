"""What routes depend on: the service state (built in the app's lifespan) and the tenant."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from recap_memory.llm.base import ChatModel
from recap_memory.service.compaction import CompactionRunner
from recap_memory.service.events import EventBus
from recap_memory.service.metrics import Metrics
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


def get_state(request: Request) -> ServiceState:
    """The running service's state."""
    state: ServiceState = request.app.state.recap
    return state


State = Annotated[ServiceState, Depends(get_state)]


def get_tenant(request: Request, state: State) -> str:
    """The tenant of the request's API key (``default`` when no keys are configured)."""
    tenants = state.settings.tenants()
    if not tenants:
        return DEFAULT_TENANT
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and key:
        for known, tenant in tenants.items():
            if hmac.compare_digest(known.encode(), key.strip().encode()):
                return tenant
    raise HTTPException(
        401,
        "missing or unknown API key: send Authorization: Bearer <key>",
        headers={"WWW-Authenticate": "Bearer"},
    )


Tenant = Annotated[str, Depends(get_tenant)]
