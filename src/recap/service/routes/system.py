"""Service-wide figures: ``/stats``, ``/metrics``, ``/healthz``."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST

from recap.service.deps import State, Tenant
from recap.service.schemas import Stats

router = APIRouter(tags=["system"])


@router.get("/stats")
async def stats(tenant: Tenant, state: State) -> Stats:
    """Compaction totals (from the usage events) and session totals of the tenant."""
    return Stats(summary=await state.store.stats(tenant))


@router.get("/metrics", response_class=Response)
async def metrics(_: Tenant, state: State) -> Response:
    """Prometheus metrics of this process."""
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process answers (no authentication)."""
    return {"status": "ok"}
