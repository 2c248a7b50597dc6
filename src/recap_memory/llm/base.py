"""The model interface: one required method, capabilities as attributes.

A backend subclasses :class:`ChatModel` and implements :meth:`ChatModel.execute`
(plain chat messages in, a :class:`Completion` out). Its ``context_window``
(tokens) tells the summarizer how much it may send in one request.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

ChatTurn = dict[str, str]
"""A plain ``{"role": ..., "content": ...}`` message sent to a model."""


class ModelOptions(BaseModel):
    """Generation options (Design B: temperature 0.2, at most 500 tokens)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.2, ge=0.0, le=2.0)
    max_tokens: int = Field(default=500, gt=0)


@dataclass(frozen=True)
class Completion:
    """A model's answer with the usage the backend reported (None when it gave none)."""

    text: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    duration_ms: float = 0.0
    attempts: int = 1
    """Requests made to get this answer (more than 1 after retries)."""
    truncated: bool = False
    """The backend stopped at ``max_tokens`` (the text is cut off)."""


@dataclass(frozen=True)
class Usage:
    """One model call as recorded in reports and usage events.

    Token counts come from the backend's response; None when it gave none.
    ``error`` is set (and the counts None) when the call failed.
    """

    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    duration_ms: float
    attempts: int = 1
    error: str | None = None

    @classmethod
    def of(cls, completion: Completion) -> Usage:
        """The usage of a successful call."""
        return cls(
            completion.model,
            completion.prompt_tokens,
            completion.completion_tokens,
            round(completion.duration_ms, 3),
            completion.attempts,
        )


class ChatModel(ABC):
    """A chat model backend. Subclasses implement :meth:`execute`."""

    name: str = "model"
    context_window: int = 8192
    """Tokens the model accepts per request, prompt and completion together."""

    @abstractmethod
    async def execute(self, messages: Sequence[ChatTurn], options: ModelOptions) -> Completion:
        """Generate one completion for ``messages``."""

    async def count_tokens(self, messages: Sequence[ChatTurn]) -> int | None:
        """The prompt's size in the model's own tokens, or None when the backend cannot tell
        (then recap's estimate, with a margin, plans the request)."""
        return None

    async def stream(
        self, messages: Sequence[ChatTurn], options: ModelOptions
    ) -> AsyncIterator[str]:
        """The reply in pieces as the model writes it (for a chat UI). Backends that cannot
        stream give the whole completion as one piece."""
        yield (await self.execute(messages, options)).text
