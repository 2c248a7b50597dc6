"""Settings read from the environment (and a ``.env`` file), with the seeds' names honoured.

recap's own variables start with ``RECAP_``. The reference designs' names work
too: Design A's ``SUMMARIZATION_*`` and Design B's ``UTILITY_MODEL``,
``INFERENCE_SERVICE_URL`` (and Ollama's ``OLLAMA_BASE_URL``), plus OpenAI's
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``. A ``RECAP_`` variable wins over a
seed name; an explicit argument wins over both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import AliasChoices, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from recap_memory.errors import ConfigurationError
from recap_memory.llm.base import ModelOptions
from recap_memory.llm.retry import RetryPolicy
from recap_memory.policy import (
    DEFAULT_KEEP_CHARS,
    DEFAULT_TRIGGER_CHARS,
    DEFAULT_UPDATE_BELOW_TOKENS,
    Budget,
    Policy,
    Trigger,
)
from recap_memory.summarizers import Strategy

PROVIDERS = ("openai", "ollama", "llamacpp", "langchain")
"""Model spec prefixes (``PROVIDER:MODEL``)."""

Settings = TypeVar("Settings", bound=BaseSettings)


def _default(model: type[Any], field: str) -> Any:
    """A default defined once, on the class that uses it."""
    return model.model_fields[field].default


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
    temperature: float = Field(
        default=_default(ModelOptions, "temperature"),
        ge=0,
        le=2,
        validation_alias="RECAP_LLM_TEMPERATURE",
    )
    max_tokens: int = Field(
        default=_default(ModelOptions, "max_tokens"), gt=0, validation_alias="RECAP_LLM_MAX_TOKENS"
    )
    attempts: int = Field(
        default=_default(RetryPolicy, "attempts"),
        ge=1,
        le=10,
        validation_alias="RECAP_LLM_ATTEMPTS",
    )
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
        default=DEFAULT_TRIGGER_CHARS,
        gt=0,
        validation_alias=AliasChoices("RECAP_THRESHOLD_CHARS", "SUMMARIZATION_THRESHOLD_CHARS"),
    )
    keep_chars: int = Field(
        default=DEFAULT_KEEP_CHARS,
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
        default=DEFAULT_UPDATE_BELOW_TOKENS,
        gt=0,
        validation_alias=AliasChoices("RECAP_SUMMARY_UPDATE_TOKENS", "SUMMARY_MAX_TOKENS"),
    )
    """Design B's ``SUMMARY_MAX_TOKENS``: the size past which the chain starts a new summary
    row; below it the latest row is updated cumulatively (the policy's ``update_below``)."""
    summary_max_chars: int | None = Field(
        default=None, gt=0, validation_alias="RECAP_SUMMARY_MAX_CHARS"
    )
    """The cap on the summary, the whole chain (the policy's ``summary_max``); unset: two
    thirds of the room between trigger and keep."""
    max_chars: int | None = Field(default=None, gt=0, validation_alias="RECAP_MAX_CHARS")
    """The hard cap on the context handed to a model, in characters (``Policy.max``)."""
    max_tokens: int | None = Field(default=None, gt=0, validation_alias="RECAP_MAX_TOKENS")
    """The same in tokens (give one of the two)."""
    strategy: Strategy | None = Field(default=None, validation_alias="RECAP_STRATEGY")
    """``RECAP_STRATEGY``: extractive, llm, mask or hybrid; unset: ``llm`` when a model is
    configured, else ``extractive``."""
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
        cap: dict[str, Budget] = {}
        if self.summary_max_chars is not None:
            cap["summary_max"] = Budget(chars=self.summary_max_chars)
        if self.max_chars is not None and self.max_tokens is not None:
            raise ConfigurationError("give RECAP_MAX_CHARS or RECAP_MAX_TOKENS, not both")
        if self.max_chars is not None or self.max_tokens is not None:
            cap["max"] = Budget(chars=self.max_chars, tokens=self.max_tokens)
        try:
            return Policy(
                enabled=self.enabled,
                trigger=Trigger(chars=self.threshold_chars, tokens=self.threshold_tokens),
                keep=Budget(chars=self.keep_chars),
                update_below=Budget(tokens=self.summary_max_tokens),
                min_new_messages=self.min_episodes,
                **cap,
            )
        except ValidationError as exc:
            problems = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
            raise ConfigurationError(
                f"summarization settings: {problems} (SUMMARIZATION_KEEP_CHARS must be below "
                "SUMMARIZATION_THRESHOLD_CHARS)"
            ) from exc


def load_settings(
    cls: type[Settings],
    overrides: Mapping[str, Any] | None = None,
    *,
    options: Mapping[str, str] | None = None,
) -> Settings:
    """``cls`` read from the environment (and ``.env``) with ``overrides`` on top; any bad
    value becomes one :class:`ConfigurationError` naming what the user set: the variable,
    or for an override the command-line option ``options`` names (``--field-name`` when
    not named)."""
    overrides = overrides or {}
    try:
        return cls(**overrides)
    except ValidationError as exc:
        given = {f: (options or {}).get(f, f"--{f.replace('_', '-')}") for f in overrides}
        raise ConfigurationError(settings_problem(cls, exc, given)) from exc


def settings_problem(
    cls: type[BaseSettings], exc: ValidationError, given: Mapping[str, str] | None = None
) -> str:
    """One line for ``exc``: each bad value by the name it was given under (``given`` maps
    fields set by other means than the environment to their names), and what's wrong."""
    problems = []
    for error in exc.errors():
        field = _field_of(cls, str(error["loc"][0]) if error["loc"] else "")
        info = cls.model_fields.get(field)
        if given and field in given:
            name = given[field]
        else:
            name = _given_name(cls, field, info) if info is not None else field
        value = error.get("input")
        shown = f"={value!r}" if isinstance(value, str | int | float) else ""
        problems.append(f"{name}{shown}: {error['msg'].removeprefix('Value error, ')}")
    return "invalid setting " + "; ".join(problems)


def _field_of(cls: type[BaseSettings], loc: str) -> str:
    """The field an error location names (pydantic reports a field read by alias under
    the alias)."""
    if loc in cls.model_fields:
        return loc
    for field, info in cls.model_fields.items():
        alias = info.validation_alias
        names = alias.choices if isinstance(alias, AliasChoices) else [alias]
        if loc in [str(n) for n in names]:
            return field
    return loc


def _given_name(cls: type[BaseSettings], field: str, info: FieldInfo) -> str:
    """The environment variable that set ``field`` (the first one set), else its main name."""
    alias = info.validation_alias
    names = (
        [str(a) for a in alias.choices]
        if isinstance(alias, AliasChoices)
        else [alias]
        if isinstance(alias, str)
        else [f"{cls.model_config.get('env_prefix', '')}{field}".upper()]
    )
    environ = {k.upper() for k in os.environ}
    return next((n for n in names if n.upper() in environ), names[0])
