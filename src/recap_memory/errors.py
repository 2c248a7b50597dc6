"""Every error recap raises, in one hierarchy.

    RecapError                  base class: catch this to catch everything recap raises
    ├── ConfigurationError      a setting or budget is invalid (negative, keep >= trigger, ...)
    ├── InputError              a conversation could not be read or is not a valid history
    │   └── InvalidHistoryError messages that parse but break a pairing rule (orphan result)
    ├── SummaryRejected         a summarizer's output failed validation; the history is unchanged
    ├── ContextTooLargeError    a context cannot be held within the hard cap (Policy.max)
    ├── BackendError            a model backend failed (timeout, HTTP error, bad reply, ...)
    │   └── ContextOverflowError a request would not fit the model's context window
    └── StoreError              the session store refused or failed an operation
        ├── NotFoundError       no such session (for this tenant)
        └── BusyError           the session is being compacted by someone else right now

Messages are written for the person who has to fix the problem: they say what
was wrong, where, and what to do.
"""

from __future__ import annotations


class RecapError(Exception):
    """Base class of every error raised by recap."""


class ConfigurationError(RecapError, ValueError):
    """A setting, budget or option is invalid."""


class InputError(RecapError, ValueError):
    """Input (a file, a request body, a message dict) could not be read.

    ``where`` names the place (file, line, message index) when it is known.
    """

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


class InvalidHistoryError(InputError):
    """Messages that parse but do not form a history a provider would accept."""


class SummaryRejected(RecapError):
    """A summary failed validation; ``reason`` is a short machine-readable code."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"summary rejected ({reason}): {detail}")


class ContextTooLargeError(RecapError):
    """A context cannot be held within the policy's hard cap, even with every tool output
    masked (the newest user message, or the system prompt, alone is too large)."""


class BackendError(RecapError):
    """A model backend failed to produce a completion.

    ``kind`` says how (``timeout``, ``connection``, ``http``, ``rate_limit``,
    ``malformed``, ``empty``, ``overflow``, ``backend``); ``retryable`` whether
    asking again may help; ``retry_after`` the seconds the server asked to wait
    (429 / 503 ``Retry-After``); ``status`` the HTTP status when there was one;
    ``attempts`` how many requests were made before giving up.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "backend",
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        self.kind = kind
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.attempts = 1
        super().__init__(message)


class ContextOverflowError(BackendError):
    """A request to a model would exceed its context window."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message, kind="overflow", status=status)


class StoreError(RecapError):
    """The session store refused or failed an operation."""


class NotFoundError(StoreError, LookupError):
    """No such session, or one that belongs to another tenant."""


class BusyError(StoreError):
    """The session is being compacted elsewhere; try again when it finishes."""


class ConflictError(StoreError):
    """The request contradicts what the store already holds (a message id reused for other
    content, an Idempotency-Key reused for another request)."""


class OutcomeUnknownError(StoreError):
    """The database connection failed while committing: the write may or may not have
    happened. A retry with the same Idempotency-Key (or message ids) is safe."""


class IdempotencyKeyReusedError(StoreError):
    """An Idempotency-Key already used for a different request; a new request needs a new
    key."""
