"""The assistant message a streamed chat completion (OpenAI's SSE chunks) adds up to."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class StreamAssembler:
    """Feed it the raw bytes of the stream as they pass; :meth:`message` is the reply."""

    _buffer: bytes = b""
    _content: list[str] = field(default_factory=list)
    _calls: dict[int, _Call] = field(default_factory=dict)
    done: bool = False
    """Whether ``data: [DONE]`` arrived (a stream cut short is no reply to keep)."""

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the stream."""
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self._line(line.strip())

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        data = line[5:].strip()
        if data == b"[DONE]":
            self.done = True
            return
        try:
            event = json.loads(data)
            delta = event["choices"][0].get("delta") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return  # not a chunk of the first choice (usage, an error event): nothing to add
        if isinstance(delta.get("content"), str):
            self._content.append(delta["content"])
        for piece in delta.get("tool_calls") or ():
            call = self._calls.setdefault(int(piece.get("index", 0)), _Call())
            call.id = piece.get("id") or call.id
            function = piece.get("function") or {}
            call.name += function.get("name") or ""
            call.arguments += function.get("arguments") or ""

    def message(self) -> dict[str, Any] | None:
        """The assistant message as an OpenAI dict; None before ``[DONE]`` or when empty."""
        if not self.done or not (self._content or self._calls):
            return None
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) or None}
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for _, call in sorted(self._calls.items())
            ]
        return message
