"""Service-wide figures: ``/stats``, ``/metrics``, ``/healthz``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

from recap_memory.service.deps import State, Tenant, require_admin
from recap_memory.service.schemas import Stats
from recap_memory.store.engine import schema_head

router = APIRouter(tags=["system"])


@router.get("/stats")
async def stats(tenant: Tenant, state: State) -> Stats:
    """Compaction totals (from the usage events) and session totals of the tenant."""
    return Stats(summary=await state.store.stats(tenant))


@router.get("/metrics", response_class=Response, dependencies=[Depends(require_admin)])
async def metrics(state: State) -> Response:
    """Prometheus metrics of this process (every tenant's traffic): with API keys set, for
    the holder of ``RECAP_ADMIN_KEY`` only."""
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.get("/readyz", responses={503: {"description": "database unreachable or outdated"}})
async def readyz(state: State) -> JSONResponse:
    """Readiness: the database answers and its schema is the one this recap needs."""
    try:
        current = await state.store.schema_revision()
    except Exception as exc:
        reason = f"database unreachable: {type(exc).__name__}"
        return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
    head = schema_head()
    if current != head:
        reason = f"schema at {current}, needs {head}: run `recap migrate`"
        return JSONResponse({"status": "outdated", "reason": reason}, status_code=503)
    return JSONResponse({"status": "ready", "schema": current})


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process answers (no authentication)."""
    return {"status": "ok"}
