"""What the client raises: the service's error answers as :class:`RecapAPIError` (one
subclass per kind, each carrying the API's ``code``), and :class:`RecapConnectionError`
when no answer came at all."""

from __future__ import annotations

import contextlib
from typing import Any

import httpx

from recap_memory.errors import RecapError


class RecapClientError(RecapError):
    """Base class of everything :mod:`recap_memory.client` raises."""


class RecapConnectionError(RecapClientError):
    """The service could not be reached, or the connection failed before an answer came
    (after the retries that were safe to make); the httpx error is the ``__cause__``."""


class RecapAPIError(RecapClientError):
    """The service answered with an error: its HTTP ``status``, the body's ``code``,
    ``message`` and ``details``, and ``retry_after`` (seconds) when the answer said when to
    come back."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Any = None,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retry_after = retry_after
        super().__init__(f"{status} {code}: {message}")


class InvalidRequest(RecapAPIError):
    """422: a malformed request or message (``invalid_request``, ``invalid_messages``,
    ``invalid_value``); ``details`` names the field."""


class Unauthorized(RecapAPIError):
    """401 ``unauthorized``: no API key, or one the service does not know."""


class Forbidden(RecapAPIError):
    """403 ``forbidden``: the key may not use this route."""


class NotFound(RecapAPIError):
    """404 ``not_found``: no such session for this tenant (or no such route)."""


class Busy(RecapAPIError):
    """409 ``busy``: a compaction holds the session; retry after ``retry_after``."""


class Conflict(RecapAPIError):
    """409 ``conflict``: a message ``id`` the session already holds with other content."""


class IdempotencyKeyReused(RecapAPIError):
    """422 ``idempotency_key_reused``: the key was used before for another request."""


class TooLarge(RecapAPIError):
    """413: the request is over a size limit (``payload_too_large``), or the context
    cannot be held within the asked cap (``context_too_large``)."""


class OutcomeUnknown(RecapAPIError):
    """503 ``outcome_unknown``: the write may or may not have happened; a retry with the
    same Idempotency-Key is safe (the client makes it by itself)."""


class Unavailable(RecapAPIError):
    """503 ``database_unavailable`` / ``store_unavailable``: nothing was written."""


ERRORS: dict[str, type[RecapAPIError]] = {
    "invalid_request": InvalidRequest,
    "invalid_messages": InvalidRequest,
    "invalid_value": InvalidRequest,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "busy": Busy,
    "conflict": Conflict,
    "idempotency_key_reused": IdempotencyKeyReused,
    "payload_too_large": TooLarge,
    "context_too_large": TooLarge,
    "outcome_unknown": OutcomeUnknown,
    "database_unavailable": Unavailable,
    "store_unavailable": Unavailable,
}
"""The exception of each error ``code``; other codes raise :class:`RecapAPIError`."""


def retry_after(response: httpx.Response) -> float | None:
    """The seconds of the response's ``Retry-After`` header, when it gives a number."""
    with contextlib.suppress(KeyError, ValueError):
        return max(0.0, float(response.headers["retry-after"]))
    return None


def api_error(response: httpx.Response) -> RecapAPIError:
    """The exception for an error answer (the response's body must have been read). A body
    that is not the API's error shape (a proxy's page) still gives its status and text."""
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
        details = error.get("details")
    except (ValueError, KeyError, TypeError):
        text = response.text.strip()[:500] or "(empty body)"
        reason = response.reason_phrase or "error"
        code = f"http_{response.status_code}"
        message = f"HTTP {response.status_code} {reason}, not an API error body: {text}"
        details = None
    kind = ERRORS.get(code, RecapAPIError)
    return kind(response.status_code, code, message, details, retry_after(response))
