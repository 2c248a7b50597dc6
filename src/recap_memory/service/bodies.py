"""JSON request bodies parsed off the event loop when they are large.

FastAPI parses and validates a body on the event loop; a few megabytes of
messages would stall every other request for a second. :func:`json_body` reads
the body, then parses and validates it with pydantic in a worker thread (same
422 errors, fields under ``body``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import Depends, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from recap_memory.offload import LARGE_BODY_BYTES, off_loop

_M = TypeVar("_M", bound=BaseModel)


def json_body(model: type[_M]) -> Any:
    """A dependency giving the request's JSON body as ``model``."""

    async def parse(request: Request) -> _M:
        raw = await request.body()
        try:
            return await off_loop(len(raw) >= LARGE_BODY_BYTES, model.model_validate_json, raw)
        except ValidationError as exc:
            errors = [
                {**error, "loc": ("body", *error["loc"]), "msg": _readable(error)}
                for error in exc.errors(
                    include_url=False, include_context=False, include_input=False
                )
            ]
            raise RequestValidationError(errors) from exc

    return Depends(parse)


def _readable(error: Any) -> str:
    """The error's message; for a body that is not JSON at all, what was wrong with it."""
    message = str(error["msg"])
    if error["type"] != "json_invalid":
        return message
    if "unicode" in message:
        reason = "it is not valid UTF-8"
    elif "recursion" in message:
        reason = "it is nested too deep"
    else:
        reason = message.removeprefix("Invalid JSON: ")
    return f"the request body could not be read as JSON ({reason}); send UTF-8 JSON"


def documented(model: type[BaseModel]) -> dict[str, Any]:
    """The ``openapi_extra`` that documents ``model`` as the route's JSON body."""
    schema = {"schema": model.model_json_schema()}
    return {"requestBody": {"required": True, "content": {"application/json": schema}}}
