"""Errors as ``{"error": {"code", "message"}}`` with the status that fits each kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, DBAPIError, OperationalError
from starlette.exceptions import HTTPException

from recap_memory.errors import (
    BusyError,
    ConflictError,
    ContextTooLargeError,
    IdempotencyKeyReusedError,
    InputError,
    NotFoundError,
    OutcomeUnknownError,
    StoreError,
)
from recap_memory.service.proxy.upstream import NoUpstream


class PayloadTooLarge(Exception):
    """A request body or a message is over its size limit."""


def error_response(
    status: int,
    code: str,
    message: str,
    details: Any = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The one error body shape of the API."""
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return JSONResponse({"error": body}, status_code=status, headers=dict(headers or {}))


def _field(loc: Any) -> str:
    return ".".join(str(p) for p in loc)


def install_error_handlers(app: FastAPI) -> None:
    """Map every error the API can raise to a status and the error body."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        details = [{"field": _field(e["loc"]), "message": e["msg"]} for e in errors]
        message = f"{_field(first['loc'])}: {first['msg']}"
        return error_response(422, "invalid_request", message, details)

    @app.exception_handler(InputError)
    async def _input(_: Request, exc: InputError) -> JSONResponse:
        return error_response(422, "invalid_messages", str(exc), {"field": exc.where})

    @app.exception_handler(PayloadTooLarge)
    async def _too_large(_: Request, exc: PayloadTooLarge) -> JSONResponse:
        return error_response(413, "payload_too_large", str(exc))

    @app.exception_handler(ContextTooLargeError)
    async def _context_too_large(_: Request, exc: ContextTooLargeError) -> JSONResponse:
        return error_response(413, "context_too_large", str(exc))

    @app.exception_handler(NotFoundError)
    async def _not_found(_: Request, exc: NotFoundError) -> JSONResponse:
        return error_response(404, "not_found", str(exc))

    @app.exception_handler(BusyError)
    async def _busy(_: Request, exc: BusyError) -> JSONResponse:
        return error_response(409, "busy", str(exc), headers={"Retry-After": "1"})

    @app.exception_handler(NoUpstream)
    async def _no_upstream(_: Request, exc: NoUpstream) -> JSONResponse:
        return error_response(404, "no_upstream", str(exc))  # not here, not "try later"

    @app.exception_handler(ConflictError)
    async def _conflict(_: Request, exc: ConflictError) -> JSONResponse:
        return error_response(409, "conflict", str(exc))

    @app.exception_handler(IdempotencyKeyReusedError)
    async def _key_reused(_: Request, exc: IdempotencyKeyReusedError) -> JSONResponse:
        return error_response(422, "idempotency_key_reused", str(exc))

    @app.exception_handler(OutcomeUnknownError)
    async def _unknown(request: Request, exc: OutcomeUnknownError) -> JSONResponse:
        retry = (
            "retry with the same Idempotency-Key: it is safe"
            if request.headers.get("idempotency-key")
            else "read the record to see, or send writes with an Idempotency-Key header (or "
            "messages with ids) so a retry is always safe"
        )
        return error_response(
            503, "outcome_unknown", f"{exc}; {retry}", headers={"Retry-After": "1"}
        )

    @app.exception_handler(StoreError)
    async def _store(_: Request, exc: StoreError) -> JSONResponse:
        return error_response(503, "store_unavailable", str(exc))

    @app.exception_handler(DataError)
    async def _data(_: Request, exc: DataError) -> JSONResponse:
        return error_response(
            422, "invalid_value", f"the database refused a value ({type(exc.orig).__name__})"
        )

    @app.exception_handler(OperationalError)
    @app.exception_handler(DBAPIError)
    async def _database(_: Request, exc: Exception) -> JSONResponse:
        return error_response(
            503,
            "database_unavailable",
            f"the database failed ({type(exc).__name__}); nothing was written, retry shortly",
            headers={"Retry-After": "1"},
        )

    @app.exception_handler(HTTPException)
    async def _http(_: Request, exc: HTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.__cause__ is not None:
            return _unreadable_body(exc.__cause__)
        code = {
            401: "unauthorized",
            403: "forbidden",
            404: "not_found",
            405: "method_not_allowed",
        }.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail), headers=exc.headers)


def _unreadable_body(cause: BaseException) -> JSONResponse:
    """FastAPI's 400 for a body it could not read as JSON (bytes that are not UTF-8,
    nesting too deep to parse): 422 like any other malformed body."""
    if isinstance(cause, UnicodeDecodeError):
        reason = "it is not valid UTF-8"
    elif isinstance(cause, RecursionError):
        reason = "it is nested too deep"
    else:
        reason = type(cause).__name__
    message = f"body: the request body could not be read as JSON ({reason}); send UTF-8 JSON"
    return error_response(422, "invalid_request", message, [{"field": "body", "message": reason}])
