"""Choosing a backend by configuration: ``PROVIDER:MODEL`` strings.

    openai:gpt-4o-mini          OpenAI-compatible HTTP (base URL from --llm-url / OPENAI_BASE_URL)
    ollama:qwen2.5:3b           Ollama /api/chat (INFERENCE_SERVICE_URL / OLLAMA_BASE_URL)
    llamacpp:/models/m.gguf     llama.cpp in this process (pip install recap-memory[local])
    langchain:openai:gpt-4o     LangChain's init_chat_model (pip install langchain)
    extractive                  no model at all

Every model built here is wrapped in :class:`~recap_memory.llm.retry.Retrying`.
"""

from __future__ import annotations

from dataclasses import dataclass

from recap_memory.errors import ConfigurationError
from recap_memory.llm.base import ChatModel
from recap_memory.llm.llamacpp import LlamaCppModel
from recap_memory.llm.ollama import OLLAMA_URL, OllamaModel
from recap_memory.llm.openai import OPENAI_URL, OpenAIModel
from recap_memory.llm.retry import Retrying, RetryPolicy
from recap_memory.settings import PROVIDERS, LLMSettings

NO_MODEL = ("extractive", "none")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: the provider and what follows its colon (model name or path)."""

    provider: str
    target: str


def parse_spec(spec: str) -> ModelSpec | None:
    """The spec's provider and model, or None for ``extractive`` (no model)."""
    text = spec.strip()
    if text in NO_MODEL:
        return None
    provider, colon, target = text.partition(":")
    if not colon or provider not in PROVIDERS or not target.strip():
        raise ConfigurationError(
            f"model spec {spec!r} is not understood: write PROVIDER:MODEL with PROVIDER one of "
            f"{', '.join(PROVIDERS)} (e.g. ollama:qwen2.5:3b), or 'extractive' for no model"
        )
    return ModelSpec(provider, target.strip())


def make_model(settings: LLMSettings | None = None, spec: str | None = None) -> ChatModel | None:
    """The model ``spec`` (or the settings' spec) names, with retries; None for no model."""
    settings = settings or LLMSettings()
    parsed = parse_spec(spec or settings.spec or "extractive")
    if parsed is None:
        return None
    return Retrying(build(parsed, settings), RetryPolicy(attempts=settings.attempts))


def build(spec: ModelSpec, settings: LLMSettings) -> ChatModel:
    """The bare backend for ``spec`` (no retries)."""
    window = settings.context_window
    if spec.provider == "openai":
        return OpenAIModel(
            spec.target,
            base_url=settings.url or settings.openai_url or OPENAI_URL,
            api_key=settings.api_key,
            timeout=settings.timeout,
            context_window=window,
        )
    if spec.provider == "ollama":
        return OllamaModel(
            spec.target,
            base_url=settings.url or settings.ollama_url or OLLAMA_URL,
            timeout=settings.timeout,
            context_window=window,
        )
    if spec.provider == "llamacpp":
        return LlamaCppModel(spec.target, context_window=window)
    return _langchain(spec.target, window)


def _langchain(target: str, window: int | None) -> ChatModel:
    from recap_memory.llm.langchain import LangChainModel

    try:
        from langchain.chat_models import init_chat_model
    except ImportError as exc:
        raise ConfigurationError(
            f"langchain:{target} needs the langchain package (pip install langchain and the "
            "provider's package); or pass a chat model object to LangChainModel"
        ) from exc
    try:
        chat_model = init_chat_model(target)
    except (ImportError, ValueError) as exc:
        raise ConfigurationError(f"langchain could not build {target!r}: {exc}") from exc
    return LangChainModel(chat_model, context_window=window)
