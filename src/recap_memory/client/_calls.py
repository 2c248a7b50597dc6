"""Every operation of the API as a :class:`Call`: the request to send and how to read its
answer, built once here for both :class:`~recap_memory.client.Client` and
:class:`~recap_memory.client.AsyncClient` (which only send them), with the retry rule."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter

from recap_memory.api_models import (
    Appended,
    CompactOut,
    Context,
    EpisodeStats,
    MessagePage,
    SessionOut,
    SessionPage,
    Stats,
    SummaryOut,
)
from recap_memory.client.errors import api_error, retry_after
from recap_memory.messages import Message, to_openai

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

MessageLike = Message | Mapping[str, Any]
"""A message to append: a :class:`~recap_memory.messages.Message` or an OpenAI chat dict."""
RETRIED_CODES = frozenset({"outcome_unknown", "database_unavailable", "store_unavailable"})
"""503 answers after which a request that is safe to repeat is sent again."""
RETRIED_ERRORS = (httpx.NetworkError, httpx.TimeoutException, httpx.RemoteProtocolError)
"""Failures with no answer after which such a request is sent again."""


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and the reading of its answer. ``repeatable``: sending it again cannot
    do anything twice (a read, or a write under an Idempotency-Key)."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    params: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    repeatable: bool = False
    streamed: bool = False
    """An open-ended answer (Server-Sent Events): no read timeout."""

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        """The request, on ``http``'s base URL, headers and timeout."""
        params = {k: v for k, v in self.params.items() if v is not None}
        t = http.timeout
        timeout = httpx.Timeout(None, connect=t.connect, write=t.write, pool=t.pool)
        return http.build_request(
            self.method,
            self.path,
            params=params,
            json=self.json,
            headers=self.headers,
            timeout=timeout if self.streamed else t,
        )

    def answer(self, response: httpx.Response) -> T:
        """The answer read from ``response`` (read in full); the API's error as an exception."""
        if response.is_error:
            raise api_error(response)
        return self.read(response)


def model(kind: type[M]) -> Callable[[httpx.Response], M]:
    """Read the response body as ``kind``."""
    return lambda response: kind.model_validate_json(response.content)


def nothing(_: httpx.Response) -> None:
    """Read no body (204)."""


_SUMMARIES = TypeAdapter(list[SummaryOut])


def summary_list(response: httpx.Response) -> list[SummaryOut]:
    """Read the response body as a list of summary rows."""
    return _SUMMARIES.validate_json(response.content)


def as_dict(message: MessageLike) -> dict[str, Any]:
    """An OpenAI chat dict of a message to append (recap's ``id`` and ``pinned`` kept)."""
    return to_openai(message) if isinstance(message, Message) else dict(message)


def new_key() -> str:
    """A fresh Idempotency-Key."""
    return f"recap-client-{uuid.uuid4().hex}"


class Calls:
    """Builds the :class:`Call` of each operation (see :class:`~recap_memory.client.Client`
    for what each does)."""

    def create_session(
        self,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> Call[SessionOut]:
        """``POST /sessions`` under ``idempotency_key`` (a new one when None)."""
        body: dict[str, Any] = {"title": title, "metadata": dict(metadata or {})}
        return Call(
            "POST",
            "/sessions",
            model(SessionOut),
            json=body,
            headers={"Idempotency-Key": idempotency_key or new_key()},
            repeatable=True,
        )

    def list_sessions(self, limit: int = 50, offset: int = 0) -> Call[SessionPage]:
        """``GET /sessions``."""
        params = {"limit": limit, "offset": offset}
        return Call("GET", "/sessions", model(SessionPage), params=params, repeatable=True)

    def get_session(self, session_id: str) -> Call[SessionOut]:
        """``GET /sessions/{id}``."""
        return Call("GET", f"/sessions/{session_id}", model(SessionOut), repeatable=True)

    def delete_session(self, session_id: str) -> Call[None]:
        """``DELETE /sessions/{id}``."""
        return Call("DELETE", f"/sessions/{session_id}", nothing)

    def append(
        self,
        session_id: str,
        messages: Iterable[MessageLike],
        idempotency_key: str | None = None,
    ) -> Call[Appended]:
        """``POST /sessions/{id}/messages`` under ``idempotency_key`` (a new one when None)."""
        return Call(
            "POST",
            f"/sessions/{session_id}/messages",
            model(Appended),
            json={"messages": [as_dict(m) for m in messages]},
            headers={"Idempotency-Key": idempotency_key or new_key()},
            repeatable=True,
        )

    def messages(
        self, session_id: str, after: int | None = None, limit: int = 100
    ) -> Call[MessagePage]:
        """``GET /sessions/{id}/messages``."""
        params = {"after": after, "limit": limit}
        path = f"/sessions/{session_id}/messages"
        return Call("GET", path, model(MessagePage), params=params, repeatable=True)

    def context(
        self,
        session_id: str,
        compact_sync: bool = False,
        max_chars: int | None = None,
        max_tokens: int | None = None,
    ) -> Call[Context]:
        """``GET /sessions/{id}/context``."""
        params = {
            "compact": "sync" if compact_sync else None,
            "max_chars": max_chars,
            "max_tokens": max_tokens,
        }
        path = f"/sessions/{session_id}/context"
        return Call("GET", path, model(Context), params=params, repeatable=True)

    def summaries(
        self, session_id: str, include_superseded: bool = False
    ) -> Call[list[SummaryOut]]:
        """``GET /sessions/{id}/summaries``."""
        params = {"include_superseded": "true" if include_superseded else None}
        path = f"/sessions/{session_id}/summaries"
        return Call("GET", path, summary_list, params=params, repeatable=True)

    def compact(self, session_id: str) -> Call[CompactOut]:
        """``POST /sessions/{id}/compact`` (never repeated: a second pass is another pass)."""
        return Call("POST", f"/sessions/{session_id}/compact", model(CompactOut))

    def episode_stats(self, session_id: str) -> Call[EpisodeStats]:
        """``GET /sessions/{id}/episode-stats``."""
        path = f"/sessions/{session_id}/episode-stats"
        return Call("GET", path, model(EpisodeStats), repeatable=True)

    def events(self, session_id: str) -> Call[None]:
        """``GET /sessions/{id}/events`` (read as a stream, see :class:`SSEDecoder`)."""
        headers = {"Accept": "text/event-stream"}
        path = f"/sessions/{session_id}/events"
        return Call("GET", path, nothing, headers=headers, streamed=True)

    def stats(self) -> Call[Stats]:
        """``GET /stats``."""
        return Call("GET", "/stats", model(Stats), repeatable=True)


@dataclass(frozen=True)
class Retry:
    """When to send a repeatable call again: after a failure with no answer or a 503 that
    says nothing was (or may have been) written, up to ``attempts`` sends in all, waiting
    the answer's ``Retry-After`` or ``backoff_s`` doubling, never over ``max_wait_s``."""

    attempts: int = 4
    backoff_s: float = 0.2
    max_wait_s: float = 5.0

    def wait(
        self,
        call: Call[Any],
        attempt: int,
        response: httpx.Response | None = None,
        error: Exception | None = None,
    ) -> float | None:
        """Seconds to wait before sending ``call`` again after its ``attempt``-th send
        (counted from 1) got ``response`` or ``error``; None: do not send it again."""
        if not call.repeatable or attempt >= self.attempts:
            return None
        if response is not None and not self._retried(response):
            return None
        if error is not None and not isinstance(error, RETRIED_ERRORS):
            return None
        asked = retry_after(response) if response is not None else None
        wait = asked if asked is not None else self.backoff_s * 2 ** (attempt - 1)
        return min(wait, self.max_wait_s)

    @staticmethod
    def _retried(response: httpx.Response) -> bool:
        if response.status_code != 503:
            return False
        return api_error(response).code in RETRIED_CODES
