"""A scripted chat model for tests: queued replies, recorded calls, a real window.

Shipped with recap so that its users' tests can drive the ``llm`` strategy
without a model::

    model = FakeModel(["**Investigating:** ...", TimeoutError("slow")])
    ...
    assert len(model.calls) == 2

A reply may be a string, a :class:`~recap_memory.llm.base.Completion` (to script
usage figures or a cut-off answer), an exception (raised), or a function of
the request messages returning a string. When the queue is empty, ``default`` answers (or
:class:`~recap_memory.errors.BackendError` is raised). A request larger than
``context_window`` raises :class:`~recap_memory.errors.ContextOverflowError`, as a
real server would reject it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass

from recap_memory.counting import approx_tokens
from recap_memory.errors import BackendError, ContextOverflowError
from recap_memory.llm.base import ChatModel, ChatTurn, Completion, ModelOptions

Reply = str | Completion | BaseException | Callable[[Sequence[ChatTurn]], str]


@dataclass(frozen=True)
class RecordedCall:
    """One request the fake received."""

    messages: tuple[ChatTurn, ...]
    options: ModelOptions
    prompt_tokens: int


class FakeModel(ChatModel):
    """See the module docstring."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        context_window: int = 8192,
        name: str = "fake",
    ) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.default = default
        self.context_window = context_window
        self.name = name
        self.calls: list[RecordedCall] = []

    async def execute(self, messages: Sequence[ChatTurn], options: ModelOptions) -> Completion:
        """Answer with the next scripted reply (see the module docstring)."""
        prompt_tokens = sum(approx_tokens(m["content"]) + 4 for m in messages)
        self.calls.append(RecordedCall(tuple(messages), options, prompt_tokens))
        if prompt_tokens + options.max_tokens > self.context_window:
            raise ContextOverflowError(
                f"request of {prompt_tokens} + {options.max_tokens} tokens exceeds the "
                f"{self.context_window}-token window of {self.name}"
            )
        reply = self.replies.popleft() if self.replies else self.default
        if reply is None:
            raise BackendError(f"{self.name}: no scripted reply left for call {len(self.calls)}")
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Completion):
            return reply
        text = reply if isinstance(reply, str) else reply(messages)
        return Completion(text, self.name, prompt_tokens, approx_tokens(text))

    async def stream(
        self, messages: Sequence[ChatTurn], options: ModelOptions
    ) -> AsyncIterator[str]:
        """The scripted reply word by word, as a streaming model would send it."""
        text = (await self.execute(messages, options)).text
        for piece in re.findall(r"\S+\s*|\s+", text):
            yield piece
