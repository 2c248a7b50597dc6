"""The compactor that settings describe — one place for the CLI, the integrations and
the service to build it, so a model spec, options and fallback mean the same everywhere."""

from __future__ import annotations

from recap_memory.compactor import DEFAULT_FALLBACK, Compactor
from recap_memory.llm.base import ChatModel
from recap_memory.llm.spec import make_model
from recap_memory.policy import Policy
from recap_memory.settings import LLMSettings
from recap_memory.summarizers import make_summarizer


def configured_compactor(
    policy: Policy,
    settings: LLMSettings | None = None,
    *,
    model: ChatModel | None = None,
    strategy: str | None = None,
) -> Compactor:
    """A compactor for ``policy``: ``model`` (or the one the settings name) writes the
    summaries with the settings' options; without a model the strategy is extractive.
    The settings' ``fallback`` decides what compacts when the model fails."""
    settings = settings or LLMSettings()
    chat_model = model if model is not None else make_model(settings)
    summarizer = make_summarizer(
        strategy or ("llm" if chat_model else "extractive"), chat_model, settings.options()
    )
    fallback = DEFAULT_FALLBACK if settings.fallback == "extractive" else None
    return Compactor(summarizer, policy, fallback=fallback)
