"""A request body limit enforced while the body is read (Content-Length or chunked)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recap_memory.service.errors import error_response


class BodyLimit:
    """ASGI middleware answering 413 to bodies over ``max_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(scope, receive, send)
            return
        seen = 0
        too_large = False

        async def limited() -> Message:
            nonlocal seen, too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    too_large = True
                    return {"type": "http.disconnect"}
            return message

        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if too_large and not started:
                return  # the handler saw a disconnect; answer 413 below instead
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, tracking_send)
        except Exception:
            if not too_large:
                raise  # the cut-off body made the handler fail: that is the 413 below
        if too_large and not started:
            await self._reject(scope, receive, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413,
            "payload_too_large",
            f"request body over {self.max_bytes} bytes; send fewer messages per request "
            "(or raise RECAP_MAX_BODY_BYTES)",
        )
        await response(scope, receive, send)
