"""A Python client for the recap memory service (``recap serve``), blocking or asyncio.

    from recap_memory.client import Client

    with Client("http://127.0.0.1:8000", api_key=None) as recap:
        session = recap.create_session(title="support")
        recap.append(session.id, [{"role": "user", "content": "Where is invoice 1007?"}])
        context = recap.context(session.id, max_tokens=8_000)   # what to send the model

Answers are the service's own models (:mod:`recap_memory.api_models`); errors are
:class:`RecapAPIError` subclasses carrying the API's ``code``. Only httpx and pydantic are
needed: the client works with the core install, without the ``[server]`` extra.
"""

from recap_memory.api_models import (
    Appended,
    CompactOut,
    Context,
    ContextChange,
    EpisodeStats,
    Event,
    MessagePage,
    OtherEvent,
    SessionOut,
    SessionPage,
    SessionState,
    Stats,
    SummarizationFailed,
    SummarizationFinished,
    SummarizationSkipped,
    SummarizationStarted,
    SummarizationSuperseded,
    SummaryOut,
)
from recap_memory.client._async import AsyncClient
from recap_memory.client._calls import MessageLike, Retry
from recap_memory.client._sync import Client
from recap_memory.client.errors import (
    Busy,
    Conflict,
    Forbidden,
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    RecapAPIError,
    RecapClientError,
    RecapConnectionError,
    TooLarge,
    Unauthorized,
    Unavailable,
)

__all__ = [
    "Appended",
    "AsyncClient",
    "Busy",
    "Client",
    "CompactOut",
    "Conflict",
    "Context",
    "ContextChange",
    "EpisodeStats",
    "Event",
    "Forbidden",
    "IdempotencyKeyReused",
    "InvalidRequest",
    "MessageLike",
    "MessagePage",
    "NotFound",
    "OtherEvent",
    "OutcomeUnknown",
    "RecapAPIError",
    "RecapClientError",
    "RecapConnectionError",
    "Retry",
    "SessionOut",
    "SessionPage",
    "SessionState",
    "Stats",
    "SummarizationFailed",
    "SummarizationFinished",
    "SummarizationSkipped",
    "SummarizationStarted",
    "SummarizationSuperseded",
    "SummaryOut",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
]
