"""A LangChain chat model that answers any summarization prompt with recap's extractive
summary of the conversation text it was given — a deterministic, offline stand-in for an
LLM, so that several summarization engines can run behind the *same* summarizer and any
difference between them comes from their policy, not from the model.

What it summarizes: the text of the messages it receives, minus the fixed wording of
known prompt templates. A message whose text matches one of ``templates`` (``{field}``
placeholders match anything) contributes only its content fields (``transcript``,
``messages``, ``previous``, ``existing_summary``, ``summary``); any other message
contributes its transcript lines. Transcript framing is normalised away (XML message
tags, ``User:`` / ``Assistant:`` role prefixes), so every prompt format yields the same
text. The answer is at most ``max_chars`` characters — or fewer when the prompt itself
asks for fewer (a ``{max_chars}`` field), as an instruction-following model would.

Every call is recorded in ``calls`` with the tokens it was sent
(``count_tokens_approximately``, LangChain's default counter), and the reply carries the
same figures as ``usage_metadata``. A prompt over ``context_window`` tokens raises
``ContextOverflowError``, as a real provider would refuse it.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from langchain_core.exceptions import ContextOverflowError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, model_validator

from recap_memory.adapters.langchain import from_langchain
from recap_memory.messages import Message
from recap_memory.summarizers.base import FoldRequest, transcript_lines
from recap_memory.summarizers.extractive import ExtractiveSummarizer
from recap_memory.summarizers.llm import CUMULATIVE, FRESH, STRUCTURED

CONTENT_FIELDS = frozenset({"transcript", "messages", "previous", "existing_summary", "summary"})
"""Template fields that hold conversation text (other fields, like ``max_chars``, do not)."""
RECAP_TEMPLATES = (STRUCTURED, FRESH, CUMULATIVE)
_FIELD = re.compile(r"\{(\w+)\}")
_TOOL_CALL_TAG = re.compile(r'<tool_call\b[^>]*\bname="([^"]*)"[^>]*>(.*?)</tool_call>', re.DOTALL)
_TAG = re.compile(r"</?(message|content|tool_call)\b[^>]*>")
_ROLE_PREFIX = re.compile(
    r"^((User|Assistant|System|Human|AI): |Assistant (?=called )|Tool result \([^)]*\): )"
)
_SUMMARY_PREFIX = "User: "


@dataclass(frozen=True)
class SummaryCall:
    """One request the model answered."""

    input_tokens: int
    """Tokens of everything it was sent (prompt wording included)."""
    text_chars: int
    """Characters of the conversation text it summarized."""
    max_chars: int
    """The cap the answer was held to."""
    output_chars: int


@dataclass(frozen=True)
class _Template:
    pattern: re.Pattern[str]
    fields: tuple[str, ...]


def _compile(template: str) -> _Template:
    """A template as a full-match pattern; each ``{field}`` matches any text."""
    pieces = _FIELD.split(template.strip())
    regex = "".join(
        re.escape(piece) if n % 2 == 0 else f"(?P<f{n // 2}>.*)" for n, piece in enumerate(pieces)
    )
    return _Template(re.compile(regex, re.DOTALL), tuple(pieces[1::2]))


class ExtractiveChatModel(BaseChatModel):
    """See the module docstring."""

    max_chars: int = Field(gt=0)
    """The longest answer, in characters."""
    context_window: int = Field(default=128_000, gt=0)
    """Tokens it accepts per request (also published as ``profile["max_input_tokens"]``)."""
    templates: tuple[str, ...] = RECAP_TEMPLATES
    """Prompt templates whose fixed wording is not part of what it summarizes."""
    calls: list[SummaryCall] = Field(default_factory=list)

    @model_validator(mode="after")
    def _publish_window(self) -> Self:
        if self.profile is None:
            self.profile = {"max_input_tokens": self.context_window}
        return self

    @property
    def _llm_type(self) -> str:
        return "recap-extractive"

    @property
    def input_tokens(self) -> int:
        """Tokens sent to the model over all its calls."""
        return sum(c.input_tokens for c in self.calls)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        tokens = count_tokens_approximately(messages)
        if tokens > self.context_window:
            raise ContextOverflowError(
                f"prompt of {tokens} tokens exceeds the {self.context_window}-token window"
            )
        text, asked = prompt_text(messages, [_compile(t) for t in self.templates])
        cap = min(self.max_chars, asked) if asked else self.max_chars
        summary = extractive_summary(text, cap)
        self.calls.append(SummaryCall(tokens, len(text), cap, len(summary)))
        out = math.ceil(len(summary) / 4)
        reply = AIMessage(
            content=summary,
            usage_metadata={
                "input_tokens": tokens,
                "output_tokens": out,
                "total_tokens": tokens + out,
            },
            response_metadata={"finish_reason": "stop", "model_name": self._llm_type},
        )
        return ChatResult(generations=[ChatGeneration(message=reply)])


def prompt_text(messages: Sequence[BaseMessage], templates: Sequence[_Template]) -> tuple[str, int]:
    """The conversation text in ``messages`` and the cap a prompt asks for (0: none)."""
    lines: list[str] = []
    asked = 0
    for message in messages:
        body = message.content if isinstance(message.content, str) else ""
        match = next(((t, m) for t in templates if (m := t.pattern.fullmatch(body.strip()))), None)
        if match is None:
            lines.extend(transcript_lines(from_langchain(message)))
            continue
        template, found = match
        for n, name in enumerate(template.fields):
            value = found.group(f"f{n}")
            if name in CONTENT_FIELDS:
                lines.extend(value.splitlines())
            elif name == "max_chars" and value.strip().isdigit():
                asked = int(value)
    return "\n".join(_normalised(lines)), asked


def _normalised(lines: Sequence[str]) -> list[str]:
    """Lines without transcript framing: XML message tags, role and tool-result prefixes,
    blank lines; tool calls read ``called name(arguments)`` in every format."""
    text = _TOOL_CALL_TAG.sub(lambda m: f"called {m.group(1)}({m.group(2)})", "\n".join(lines))
    text = html.unescape(_TAG.sub("\n", text))
    out = []
    for line in text.splitlines():
        line = _ROLE_PREFIX.sub("", line.strip())
        if line:
            out.append(line)
    return out


def extractive_summary(text: str, max_chars: int) -> str:
    """recap's extractive summary of plain text, one line of the text per source message."""
    lines = [Message(role="user", content=line) for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    summary = ExtractiveSummarizer().summarize(FoldRequest(lines, max_chars))
    return "\n".join(line.removeprefix(_SUMMARY_PREFIX) for line in summary.splitlines())
