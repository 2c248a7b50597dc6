"""The memory service's own settings (``RECAP_*``, from the environment or ``.env``)."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from recap_memory.errors import ConfigurationError
from recap_memory.service.hosts import is_loopback
from recap_memory.service.writes import origin_key
from recap_memory.settings import load_settings
from recap_memory.store.urls import DEFAULT_URL, async_url


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
    admin_key: str | None = None
    """The key ``/metrics`` needs when API keys are set (without keys it is open)."""
    allowed_hosts: str | None = None
    """Host names (comma-separated) requests may address besides loopback ones; unset:
    loopback only without API keys, any host with them."""
    cors_origins: str | None = None
    """Origins (``https://app.example:8443``, comma-separated) whose pages may call the API
    from a browser (CORS); unset: none."""
    max_body_bytes: int = Field(default=8 * 1024 * 1024, gt=0)
    max_message_chars: int = Field(default=500_000, gt=0)
    max_messages_per_request: int = Field(default=1_000, gt=0)
    embedded_worker: bool = True
    """Compact due sessions inside the server process (else run ``recap worker``)."""
    summarize_processes: int = Field(default=1, ge=0, le=64)
    """Processes that run the extractive summarizer's CPU work, so a long pass never
    stalls the server's requests (0: a thread of the server process)."""
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
    idempotency_ttl_s: float = Field(default=86_400.0, gt=0)
    """How long the answer to a write sent with an ``Idempotency-Key`` is kept for retries."""
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
    upstream_url: str | None = None
    """``RECAP_UPSTREAM_URL``: the OpenAI-compatible ``/v1`` base (``http://127.0.0.1:11434/v1``,
    ``https://api.openai.com/v1``) that ``/v1/chat/completions`` forwards to."""
    upstream_api_key: SecretStr | None = None
    """The upstream's key; without it the caller's ``Authorization`` is passed on (only
    when recap has no API keys of its own: then that header is recap's key)."""
    upstream_timeout_s: float = Field(default=600.0, gt=0)
    """How long one upstream request may take (a long generation, streamed or not)."""
    migrate_on_start: bool = True
    """Upgrade the schema when the server starts (else refuse an outdated one)."""

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: str) -> str:
        async_url(value)  # raises ConfigurationError with the accepted forms
        return value

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: str | None) -> str | None:
        for origin in _items(value):
            if origin_key(origin) is None:
                raise ConfigurationError(
                    f"{origin!r} is not an origin: write scheme://host[:port], such as "
                    "https://app.example or http://localhost:5173 (several separated by commas)"
                )
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
        if self.admin_key is not None and self.admin_key.strip() in pairs:
            raise ConfigurationError(
                "RECAP_ADMIN_KEY is also a tenant's key in RECAP_API_KEYS: give the admin its own"
            )
        return pairs

    def host_allow_list(self) -> frozenset[str] | None:
        """Host names besides loopback ones that requests may address; None: any (API keys
        set and no ``RECAP_ALLOWED_HOSTS``)."""
        if self.allowed_hosts is None and self.tenants():
            return None
        return frozenset(name.lower().rstrip(".") for name in _items(self.allowed_hosts))

    def cors_origin_list(self) -> list[str]:
        """The origins allowed to call the API from a browser page."""
        return [origin.rstrip("/") for origin in _items(self.cors_origins)]

    def check_bind(self, host: str) -> None:
        """Refuse to listen beyond loopback when no API keys protect the service."""
        if self.tenants() or is_loopback(host):
            return
        raise ConfigurationError(
            f"refusing to listen on {host} without API keys: set RECAP_API_KEYS=KEY:TENANT "
            "or listen on 127.0.0.1"
        )


def _items(value: str | None) -> list[str]:
    """The non-empty entries of a comma-separated setting."""
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def load_service_settings(**overrides: object) -> ServiceSettings:
    """The settings from the environment; any mistake becomes one :class:`ConfigurationError`."""
    return load_settings(ServiceSettings, overrides)
