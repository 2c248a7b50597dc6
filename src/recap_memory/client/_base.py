"""What :class:`~recap_memory.client.Client` and :class:`~recap_memory.client.AsyncClient`
share: their settings, the calls they send, the retry rule."""

from __future__ import annotations

from typing import Any

from recap_memory import __version__
from recap_memory.client._calls import Call, Calls, Retry
from recap_memory.client.errors import RecapConnectionError

DEFAULT_URL = "http://127.0.0.1:8000"
"""Where ``recap serve`` listens by default."""
DEFAULT_TIMEOUT_S = 30.0


class BaseClient:
    """The settings of a client (see :class:`~recap_memory.client.Client`)."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: Retry | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.calls = Calls()
        self.retry = retry or Retry()
        headers = {"User-Agent": f"recap-memory-client/{__version__}"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http_options: dict[str, Any] = {
            "base_url": self.base_url,
            "headers": headers,
            "timeout": timeout,
        }

    def _unreachable(self, call: Call[Any], attempts: int, exc: Exception) -> RecapConnectionError:
        """The error for ``call`` that got no answer after ``attempts`` sends."""
        sent = f"{attempts} attempts" if attempts > 1 else "1 attempt"
        return RecapConnectionError(
            f"{call.method} {self.base_url}{call.path}: no answer from the recap service "
            f"({type(exc).__name__}: {str(exc) or 'no detail'}; {sent})"
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"
