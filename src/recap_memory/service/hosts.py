"""Which host names a request may address: loopback always, others when allowed.

A page on ``attacker.example`` can make a browser send requests to ``127.0.0.1`` by
rebinding its DNS name to it (DNS rebinding); those requests still carry
``Host: attacker.example``. Refusing names the service does not answer for defeats it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection

from starlette.types import ASGIApp, Receive, Scope, Send

from recap_memory.service.errors import error_response

LOOPBACK_NAMES = frozenset({"localhost"})
"""Names that always mean this machine (besides 127.0.0.0/8 and ::1)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, no port) is this machine."""
    host = host.lower().rstrip(".")
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port: ``[::1]:8000`` -> ``::1``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    if header.count(":") > 1:  # a bare IPv6 address
        return header
    return header.partition(":")[0].rstrip(".")


class HostGuard:
    """ASGI middleware answering 421 to a request whose ``Host`` is neither loopback nor
    in ``allowed``; ``allowed=None`` lets any host through."""

    def __init__(self, app: ASGIApp, allowed: Collection[str] | None) -> None:
        self.app = app
        self.allowed = None if allowed is None else frozenset(h.lower() for h in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.allowed is None:
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        name = host_name(header)
        if is_loopback(name) or name in self.allowed:
            await self.app(scope, receive, send)
            return
        response = error_response(
            421,
            "host_not_allowed",
            f"this service does not answer for host {header!r}: address it by a loopback "
            "name (127.0.0.1, localhost, ::1), add the name to RECAP_ALLOWED_HOSTS, "
            "or protect the service with RECAP_API_KEYS",
        )
        await response(scope, receive, send)
