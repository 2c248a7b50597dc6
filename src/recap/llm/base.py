"""The model interface: one required method, capabilities as attributes.

A backend subclasses :class:`ChatModel` and implements :meth:`ChatModel.execute`
(plain chat messages in, a :class:`Completion` out). Its ``context_window``
(tokens) tells the summarizer how much it may send in one request.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
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


class ChatModel(ABC):
    """A chat model backend. Subclasses implement :meth:`execute`."""

    name: str = "model"
    context_window: int = 8192
    """Tokens the model accepts per request, prompt and completion together."""

    @abstractmethod
    async def execute(self, messages: Sequence[ChatTurn], options: ModelOptions) -> Completion:
        """Generate one completion for ``messages``."""
