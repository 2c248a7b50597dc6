"""The memory service's own settings (``RECAP_*``, from the environment or ``.env``)."""

from __future__ import annotations

import ipaddress

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from recap_memory.errors import ConfigurationError
from recap_memory.settings import load_settings
from recap_memory.store.urls import DEFAULT_URL, async_url

LOOPBACK_NAMES = ("localhost",)


class ServiceSettings(BaseSettings):
    """Where the service stores sessions, how it listens, and how its worker behaves."""

    model_config = SettingsConfigDict(
        env_prefix="RECAP_", env_file=".env", extra="ignore", frozen=True
    )

    database_url: str = DEFAULT_URL
    """``sqlite:///path/recap.db`` (the default, in the working folder) or
    ``postgresql://user@host:5432/db``."""
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    api_keys: str | None = None
    """``KEY:TENANT`` pairs separated by commas; with none, one tenant and loopback only."""
    max_body_bytes: int = Field(default=8 * 1024 * 1024, gt=0)
    max_message_chars: int = Field(default=500_000, gt=0)
    max_messages_per_request: int = Field(default=1_000, gt=0)
    embedded_worker: bool = True
    """Compact due sessions inside the server process (else run ``recap worker``)."""
    worker_concurrency: int = Field(default=2, ge=1, le=64)
    poll_interval_s: float = Field(default=1.0, gt=0)
    lease_s: float = Field(default=15.0, gt=0)
    """How long a compaction lease lasts unrenewed: a pass renews it every third of this
    while its model call runs, so a crashed holder's sessions go to another worker within
    this (a restarted process on the same host takes its predecessor's back at once)."""
    retry_base_s: float = Field(default=5.0, gt=0)
    retry_max_s: float = Field(default=600.0, gt=0)
    shutdown_grace_s: float = Field(default=30.0, ge=0)
    """On SIGTERM a worker finishes the pass in flight for this long, then gives its lease back."""
    sync_wait_s: float = Field(default=60.0, gt=0)
    """``?compact=sync`` waits at most this long for the session's due compaction (the one
    it runs itself or one running elsewhere); a longer pass finishes in the background."""
    pool_size: int = Field(default=10, ge=1)
    """Database connections each process keeps (PostgreSQL)."""
    max_overflow: int = Field(default=10, ge=0)
    """Extra connections a process may open under load, beyond ``pool_size``."""
    pool_timeout_s: float = Field(default=10.0, gt=0)
    """How long a request waits for a free connection before failing with 503."""
    chat_model: str | None = None
    """``RECAP_CHAT_MODEL``: a model spec (``openai:…``, ``ollama:…``) that answers in the
    console's chat, through the compacted context; none: the console writes both sides."""
    migrate_on_start: bool = True
    """Upgrade the schema when the server starts (else refuse an outdated one)."""

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: str) -> str:
        async_url(value)  # raises ConfigurationError with the accepted forms
        return value

    def tenants(self) -> dict[str, str]:
        """API key → tenant (empty: no authentication, one ``default`` tenant)."""
        if not self.api_keys:
            return {}
        pairs: dict[str, str] = {}
        for item in self.api_keys.split(","):
            key, sep, tenant = item.strip().partition(":")
            if not sep or not key or not tenant:
                raise ConfigurationError(
                    f"RECAP_API_KEYS entry {item.strip()!r} must read KEY:TENANT "
                    "(several separated by commas)"
                )
            pairs[key] = tenant
        return pairs

    def check_bind(self, host: str) -> None:
        """Refuse to listen beyond loopback when no API keys protect the service."""
        if self.tenants() or _is_loopback(host):
            return
        raise ConfigurationError(
            f"refusing to listen on {host} without API keys: set RECAP_API_KEYS=KEY:TENANT "
            "or listen on 127.0.0.1"
        )


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_service_settings(**overrides: object) -> ServiceSettings:
    """The settings from the environment; any mistake becomes one :class:`ConfigurationError`."""
    return load_settings(ServiceSettings, overrides)
