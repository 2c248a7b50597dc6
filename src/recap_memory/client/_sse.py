"""Server-Sent Events read line by line into the service's typed events."""

from __future__ import annotations

import json

from recap_memory.api_models import Event, parse_event


class SSEDecoder:
    """Feed it the stream's lines in order; it hands back an event at each blank line that
    ends one. Comments (``: ping``), ``id:`` and ``retry:`` lines are ignored."""

    def __init__(self) -> None:
        self._name = "message"
        self._data: list[str] = []

    def feed(self, line: str) -> Event | None:
        """The event that ``line`` completes, if any."""
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            self._name = value
        elif field == "data":
            self._data.append(value)
        return None

    def _dispatch(self) -> Event | None:
        name, data = self._name, self._data
        self._name, self._data = "message", []
        if not data:
            return None
        return parse_event(name, json.loads("\n".join(data)))
