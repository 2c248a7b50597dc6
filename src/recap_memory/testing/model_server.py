"""A real HTTP model server on loopback, for tests and the reliability benchmark.

It speaks OpenAI's ``POST /v1/chat/completions`` and Ollama's ``POST /api/chat``,
records every request, and answers from a script of behaviours: a reply, an
HTTP error status, a hang, a connection dropped mid-response, or garbage.
When the script is empty it answers ``default``.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A successful answer in the protocol of the requested path; with ``tool_calls``
    (OpenAI dicts), an assistant message calling tools (``text`` may then be empty)."""

    text: str
    prompt_tokens: int = 321
    completion_tokens: int = 45
    finish: str = "stop"
    tool_calls: tuple[dict[str, Any], ...] = ()
    pause_s: float = 0.0
    """Streamed: the pause before each chunk after the first."""


@dataclass(frozen=True)
class Status:
    """An HTTP error status with a JSON (or raw) body and headers."""

    code: int
    body: Any = field(default_factory=lambda: {"error": {"message": "failure"}})
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Hang:
    """Accept the request and answer nothing for ``seconds``."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Die:
    """Send the headers and half a body, then close the connection."""


@dataclass(frozen=True)
class Garbage:
    """A 200 answer whose body is not JSON."""

    body: bytes = b"<html>proxy error</html>"


Behaviour = Reply | Status | Hang | Die | Garbage


@dataclass(frozen=True)
class Request:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any


class ModelServer:
    """See the module docstring. Use as a context manager or call start/stop."""

    def __init__(self, default: Behaviour | None = None) -> None:
        self.script: deque[Behaviour] = deque()
        self.default: Behaviour = default or Reply("The user asked about the outage.")
        self.requests: list[Request] = []
        self.cut_streams = 0
        """Streams whose client closed the connection before the last chunk."""
        self.served: list[tuple[Request, Behaviour]] = []
        """Each request with the behaviour it was answered with, in the order they came:
        what was actually served (a queued behaviour counts once a request took it)."""
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The server's base URL (``http://127.0.0.1:PORT``)."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def then(self, *behaviours: Behaviour) -> ModelServer:
        """Queue behaviours for the next requests, in order."""
        self.script.extend(behaviours)
        return self

    def start(self) -> ModelServer:
        """Listen on a free loopback port, in a background thread."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def next_behaviour(self) -> Behaviour:
        return self.script.popleft() if self.script else self.default

    def served_count(self, behaviour: Behaviour) -> int:
        """How many requests were answered with ``behaviour`` (compared by value)."""
        return sum(1 for _, b in list(self.served) if b == behaviour)


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            server.requests.append(Request(self.path, headers, None))
            if self.path.endswith("/models"):
                models = [{"id": "test-model", "object": "model", "owned_by": "recap-tests"}]
                self._send(200, json.dumps({"object": "list", "data": models}).encode())
            else:
                self._send(404, b'{"error": "no such endpoint"}')

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode(errors="replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            request = Request(self.path, headers, body)
            server.requests.append(request)
            behaviour = server.next_behaviour()
            server.served.append((request, behaviour))
            if isinstance(behaviour, Hang):
                server._stopping.wait(behaviour.seconds)
                self.close_connection = True
                return
            if isinstance(behaviour, Die):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "4096")
                self.end_headers()
                self.wfile.write(b'{"choices": [{"message": {"content": "The us')
                self.wfile.flush()
                self.close_connection = True
                return
            if isinstance(behaviour, Garbage):
                self._send(200, behaviour.body, (("Content-Type", "text/html"),))
            elif isinstance(behaviour, Status):
                payload = behaviour.body
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self._send(behaviour.code, data, behaviour.headers)
            elif isinstance(body, dict) and body.get("stream") is True:
                self._stream(behaviour)
            elif self.path.endswith("/chat/completions"):
                self._send(200, json.dumps(_openai(body, behaviour)).encode())
            elif self.path == "/api/chat":
                self._send(200, json.dumps(_ollama(body, behaviour)).encode())
            else:
                self._send(404, b'{"error": "no such endpoint"}')

        def _stream(self, reply: Reply) -> None:
            """The reply word by word: SSE for OpenAI's path (its tool calls last), JSON
            lines for Ollama's."""
            openai = self.path.endswith("/chat/completions")
            self.send_response(200)
            self.send_header(
                "Content-Type", "text/event-stream" if openai else "application/x-ndjson"
            )
            self.end_headers()
            self.close_connection = True
            pieces = [word + " " for word in reply.text.split(" ")] if reply.text else []
            lines = _sse_lines(pieces, reply.tool_calls) if openai else _ndjson_lines(pieces)
            for n, line in enumerate(lines):
                if n and reply.pause_s:
                    server._stopping.wait(reply.pause_s)
                try:
                    self.wfile.write(line.encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    server.cut_streams += 1  # the client went away mid-stream
                    return

        def _send(self, code: int, data: bytes, headers: tuple[tuple[str, str], ...] = ()) -> None:
            self.send_response(code)
            names = {name.lower() for name, _ in headers}
            if "content-type" not in names:
                self.send_header("Content-Type", "application/json")
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _openai(request: Any, reply: Reply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": request.get("model", "?"),
        "created": 1_764_460_800,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": reply.text or None,
                    **({"tool_calls": list(reply.tool_calls)} if reply.tool_calls else {}),
                },
                "finish_reason": "tool_calls" if reply.tool_calls else reply.finish,
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


def _ollama(request: Any, reply: Reply) -> dict[str, Any]:
    return {
        "model": request.get("model", "?"),
        "created_at": "2026-11-30T00:00:00Z",
        "message": {"role": "assistant", "content": reply.text},
        "done": True,
        "done_reason": "length" if reply.finish == "length" else "stop",
        "prompt_eval_count": reply.prompt_tokens,
        "eval_count": reply.completion_tokens,
    }


def _sse_lines(pieces: list[str], tool_calls: tuple[dict[str, Any], ...]) -> list[str]:
    """OpenAI's stream: one chunk per piece of text, one per tool call, then ``[DONE]``."""
    deltas: list[dict[str, Any]] = [{"content": piece} for piece in pieces]
    deltas += [{"tool_calls": [{**call, "index": i}]} for i, call in enumerate(tool_calls)]
    lines = []
    for n, delta in enumerate(deltas):
        chunk = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1_764_460_800,
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "delta": {**({"role": "assistant"} if n == 0 else {}), **delta},
                    "finish_reason": None,
                }
            ],
        }
        lines.append(f"data: {json.dumps(chunk)}\n\n")
    return [*lines, "data: [DONE]\n\n"]


def _ndjson_lines(pieces: list[str]) -> list[str]:
    """Ollama's stream: one JSON line per piece of text, then the final line."""
    lines = [
        json.dumps({"message": {"role": "assistant", "content": piece}, "done": False}) + "\n"
        for piece in pieces
    ]
    return [*lines, '{"done": true}\n']
