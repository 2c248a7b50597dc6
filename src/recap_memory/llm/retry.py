"""Bounded retries with backoff around any :class:`~recap_memory.llm.base.ChatModel`.

Only failures a retry can help are retried (``BackendError.retryable``:
timeouts, refused or dropped connections, 408/429/5xx, malformed replies).
A server's ``Retry-After`` is honoured up to ``max_retry_after_s``; asking
for a longer wait gives up at once rather than stall the caller. The last
error is raised with its ``attempts`` set.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field

from recap_memory.errors import BackendError
from recap_memory.llm.base import ChatModel, ChatTurn, Completion, ModelOptions

log = logging.getLogger("recap_memory.llm")


class RetryPolicy(BaseModel):
    """How often and how patiently to ask again."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attempts: int = Field(default=3, ge=1, le=10)
    """Requests in all, the first included."""
    backoff_s: float = Field(default=0.5, ge=0.0)
    """Wait before the first retry; doubled for each further one (with jitter)."""
    max_backoff_s: float = Field(default=8.0, ge=0.0)
    max_retry_after_s: float = Field(default=30.0, ge=0.0)
    """A server asking to wait longer than this is not waited for."""

    def delay(self, attempt: int, error: BackendError) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None to give up."""
        if not error.retryable or attempt >= self.attempts:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_retry_after_s else None
        backoff: float = min(self.max_backoff_s, self.backoff_s * 2.0 ** (attempt - 1))
        return backoff * random.uniform(0.5, 1.0)


class Retrying(ChatModel):
    """``model`` with bounded retries; reports the attempts in the completion."""

    def __init__(
        self,
        model: ChatModel,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.model = model
        self.policy = policy or RetryPolicy()
        self.sleep = sleep
        self.name = model.name
        self.context_window = model.context_window

    async def count_tokens(self, messages: Sequence[ChatTurn]) -> int | None:
        """The wrapped model's count."""
        return await self.model.count_tokens(messages)

    def stream(self, messages: Sequence[ChatTurn], options: ModelOptions) -> AsyncIterator[str]:
        """The wrapped model's stream (not retried: pieces may already be shown)."""
        return self.model.stream(messages, options)

    async def execute(self, messages: Sequence[ChatTurn], options: ModelOptions) -> Completion:
        """Ask ``model``, retrying what a retry can help (see the module docstring)."""
        started = time.perf_counter()
        attempt = 1
        while True:
            try:
                completion = await self.model.execute(messages, options)
            except BackendError as exc:
                exc.attempts = attempt
                wait = self.policy.delay(attempt, exc)
                if wait is None:
                    raise
                log.warning(
                    "%s: %s; retry %d of %d in %.1fs",
                    self.name, exc, attempt, self.policy.attempts - 1, wait,
                )  # fmt: skip
                await self.sleep(wait)
                attempt += 1
                continue
            elapsed = (time.perf_counter() - started) * 1000
            return replace(completion, attempts=attempt, duration_ms=elapsed)
