"""A LangChain chat model with scripted replies and recorded calls, for tests and the
offline example agent (the LangChain counterpart of :class:`recap_memory.llm.FakeModel`).

A reply is an ``AIMessage`` (tool calls included), a string, an exception
(raised), or a function of the received messages returning either. When the
script is empty, ``default`` answers. ``bind_tools`` returns the model itself,
so ``create_react_agent`` accepts it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

Reply = AIMessage | str | BaseException | Callable[[list[BaseMessage]], AIMessage | str]


class ScriptedChatModel(BaseChatModel):
    """See the module docstring."""

    replies: list[Any] = Field(default_factory=list)
    default: Any = None
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of every call, in order."""

    @property
    def _llm_type(self) -> str:
        return "recap-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Tools are the script's business: returns the model unchanged."""
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls.append(list(messages))
        reply = self.replies.pop(0) if self.replies else self.default
        if reply is None:
            raise RuntimeError(f"no scripted reply left for call {len(self.calls)}")
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(list(messages))
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        if message.usage_metadata is None:
            chars = sum(len(str(m.content)) for m in messages)
            message = message.model_copy(
                update={
                    "usage_metadata": {
                        "input_tokens": chars // 4,
                        "output_tokens": len(str(message.content)) // 4,
                        "total_tokens": (chars + len(str(message.content))) // 4,
                    }
                }
            )
        return ChatResult(generations=[ChatGeneration(message=message)])
