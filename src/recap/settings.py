"""Settings read from the environment (and a ``.env`` file), with the seeds' names honoured.

recap's own variables start with ``RECAP_``. The reference designs' names work
too: Design A's ``SUMMARIZATION_*`` and Design B's ``UTILITY_MODEL``,
``INFERENCE_SERVICE_URL`` (and Ollama's ``OLLAMA_BASE_URL``), plus OpenAI's
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``. A ``RECAP_`` variable wins over a
seed name; an explicit argument wins over both.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from recap.errors import ConfigurationError
from recap.llm.base import ModelOptions
from recap.policy import Budget, Policy, Trigger

PROVIDERS = ("openai", "ollama", "llamacpp", "langchain")
"""Model spec prefixes (``PROVIDER:MODEL``)."""


class LLMSettings(BaseSettings):
    """Which model writes summaries, and how it is reached."""

    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", populate_by_name=True, frozen=True
    )

    llm: str | None = Field(default=None, validation_alias="RECAP_LLM")
    """Model spec: ``openai:gpt-4o-mini``, ``ollama:qwen2.5:3b``, ``llamacpp:/m.gguf``,
    ``langchain:provider:model``, or ``extractive`` (no model)."""
    utility_model: str | None = Field(default=None, validation_alias="UTILITY_MODEL")
    """Design B's Ollama model name, used when ``RECAP_LLM`` is unset."""
    url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("RECAP_LLM_URL", "INFERENCE_SERVICE_URL"),
    )
    """Base URL of the model server (any HTTP backend)."""
    ollama_url: str | None = Field(default=None, validation_alias="OLLAMA_BASE_URL")
    openai_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("RECAP_LLM_API_KEY", "OPENAI_API_KEY")
    )
    timeout: float = Field(default=60.0, gt=0, validation_alias="RECAP_LLM_TIMEOUT")
    """Seconds to wait for one answer."""
    context_window: int | None = Field(
        default=None, gt=0, validation_alias="RECAP_LLM_CONTEXT_WINDOW"
    )
    """Tokens the model accepts per request; known per backend when unset."""
    temperature: float = Field(default=0.2, ge=0, le=2, validation_alias="RECAP_LLM_TEMPERATURE")
    max_tokens: int = Field(default=500, gt=0, validation_alias="RECAP_LLM_MAX_TOKENS")
    attempts: int = Field(default=3, ge=1, le=10, validation_alias="RECAP_LLM_ATTEMPTS")
    """Requests per call, retries included."""
    fallback: Literal["extractive", "none"] = Field(
        default="extractive", validation_alias="RECAP_FALLBACK"
    )
    """What compacts when the model fails: the extractive summarizer, or nothing."""

    def options(self) -> ModelOptions:
        """The generation options these settings ask for."""
        return ModelOptions(temperature=self.temperature, max_tokens=self.max_tokens)

    @property
    def spec(self) -> str | None:
        """The model spec in effect (``RECAP_LLM``, else ``ollama:`` + ``UTILITY_MODEL``)."""
        if self.llm:
            return self.llm
        if self.utility_model:
            model = self.utility_model
            return model if model.partition(":")[0] in PROVIDERS else f"ollama:{model}"
        return None


class SummarizationSettings(BaseSettings):
    """When to compact, by Design A's variables (``SUMMARIZATION_*``) or recap's own."""

    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", populate_by_name=True, frozen=True
    )

    enabled: bool = Field(
        default=True, validation_alias=AliasChoices("RECAP_ENABLED", "SUMMARIZATION_ENABLED")
    )
    threshold_chars: int = Field(
        default=60_000,
        gt=0,
        validation_alias=AliasChoices("RECAP_THRESHOLD_CHARS", "SUMMARIZATION_THRESHOLD_CHARS"),
    )
    keep_chars: int = Field(
        default=20_000,
        ge=0,
        validation_alias=AliasChoices("RECAP_KEEP_CHARS", "SUMMARIZATION_KEEP_CHARS"),
    )
    threshold_tokens: int | None = Field(
        default=None,
        gt=0,
        validation_alias=AliasChoices("RECAP_THRESHOLD_TOKENS", "SUMMARY_THRESHOLD_TOKENS"),
    )
    """Design B's trigger: also compact when the context passes this many tokens."""
    summary_max_tokens: int = Field(
        default=800,
        gt=0,
        validation_alias=AliasChoices("RECAP_SUMMARY_UPDATE_TOKENS", "SUMMARY_MAX_TOKENS"),
    )
    """Design B: the latest summary is updated cumulatively while under this size."""
    min_episodes: int = Field(
        default=0,
        ge=0,
        validation_alias=AliasChoices("RECAP_MIN_NEW_MESSAGES", "SUMMARY_MIN_EPISODES"),
    )
    """Design B: compact only after this many new messages since the last summary."""

    def policy(self) -> Policy:
        """The engine policy these settings describe (other fields at their defaults).

        Raises :class:`ConfigurationError` when they contradict each other.
        """
        try:
            return Policy(
                enabled=self.enabled,
                trigger=Trigger(chars=self.threshold_chars, tokens=self.threshold_tokens),
                keep=Budget(chars=self.keep_chars),
                update_below=Budget(tokens=self.summary_max_tokens),
                min_new_messages=self.min_episodes,
            )
        except ValidationError as exc:
            problems = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
            raise ConfigurationError(
                f"summarization settings: {problems} (SUMMARIZATION_KEEP_CHARS must be below "
                "SUMMARIZATION_THRESHOLD_CHARS)"
            ) from exc
