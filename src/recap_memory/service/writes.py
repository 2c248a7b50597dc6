"""What a write (``POST``, ``PUT``, ``PATCH``, ``DELETE``) must look like to be let through.

A browser sends a cross-site "simple request" (a form post, a ``text/plain`` fetch, a
body-less ``POST``) without asking the server first (no CORS preflight). Two rules keep
such requests from changing anything:

- a body must be JSON (``Content-Type: application/json`` or ``…+json``): a browser can
  only send that cross-site after a preflight, which the service refuses unless
  ``RECAP_CORS_ORIGINS`` lists the page's origin; otherwise 415;
- with ``check_origin`` (no API keys: nothing else stops a forged request), a write whose
  ``Origin`` is neither the service's own nor a configured origin is refused with 403.
  Programs (curl, httpx, SDKs) send no ``Origin`` and are not affected; the console, served
  by the service itself, sends its own.
"""

from __future__ import annotations

from collections.abc import Collection
from email.message import Message as MimeHeader
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from recap_memory.service.errors import error_response

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
DEFAULT_PORTS = {"http": 80, "https": 443}


def is_json(content_type: str) -> bool:
    """Whether a ``Content-Type`` value names JSON (``application/json``, ``…+json``)."""
    header = MimeHeader()
    header["content-type"] = content_type
    subtype = header.get_content_subtype()
    return header.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def origin_key(origin: str) -> str | None:
    """``scheme://host:port`` with the port spelled out, lower case; None when ``origin``
    is no origin (``null``, a path, another scheme)."""
    parts = urlsplit(origin.strip().lower())
    if (
        parts.scheme not in DEFAULT_PORTS
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        return None
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}:{port}"


class WriteGuard:
    """ASGI middleware enforcing the two rules above (415 and 403, in the error shape).
    ``trusted_origins`` are the origins besides the service's own that may write."""

    def __init__(
        self, app: ASGIApp, *, check_origin: bool, trusted_origins: Collection[str] = ()
    ) -> None:
        self.app = app
        self.check_origin = check_origin
        self.trusted = {key for key in map(origin_key, trusted_origins) if key}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in WRITES:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        origin = headers.get(b"origin", b"").decode("latin-1")
        content_type = headers.get(b"content-type", b"").decode("latin-1")
        if self.check_origin and origin and not self._trusted(scope, origin, headers):
            response = error_response(
                403,
                "cross_origin_write",
                f"a {scope['method']} from the page at {origin!r} is refused: without API keys "
                "the service takes writes only from its own pages and from programs; list the "
                "origin in RECAP_CORS_ORIGINS, or set RECAP_API_KEYS",
            )
        elif _has_body(headers) and not is_json(content_type):
            given = f"is {content_type!r}" if content_type else "is missing"
            response = error_response(
                415,
                "unsupported_media_type",
                f"the body's Content-Type {given}: send the body as JSON with "
                "Content-Type: application/json",
            )
        else:
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)

    def _trusted(self, scope: Scope, origin: str, headers: dict[bytes, bytes]) -> bool:
        key = origin_key(origin)
        if key is None:
            return False
        host = headers.get(b"host", b"").decode("latin-1")
        scheme = key.partition("://")[0]
        return key in self.trusted or key == origin_key(f"{scheme}://{host}")


def _has_body(headers: dict[bytes, bytes]) -> bool:
    length = headers.get(b"content-length")
    if length is not None:
        return length.strip() not in (b"", b"0")
    return b"transfer-encoding" in headers
