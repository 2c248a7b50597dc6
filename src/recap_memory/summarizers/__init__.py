"""Compaction strategies behind one interface, and the registry that names them."""

from __future__ import annotations

from typing import Literal, get_args

from recap_memory.errors import ConfigurationError
from recap_memory.llm.base import ChatModel, ModelOptions
from recap_memory.summarizers.base import Fold, FoldRequest, Summarizer
from recap_memory.summarizers.extractive import ExtractiveSummarizer
from recap_memory.summarizers.hybrid import HybridSummarizer
from recap_memory.summarizers.llm import LLMSummarizer, Prompts
from recap_memory.summarizers.mask import MaskSummarizer

Strategy = Literal["extractive", "llm", "mask", "hybrid"]
"""The compaction strategies, by name."""
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)

__all__ = [
    "STRATEGIES",
    "ExtractiveSummarizer",
    "Fold",
    "FoldRequest",
    "HybridSummarizer",
    "LLMSummarizer",
    "MaskSummarizer",
    "Prompts",
    "Strategy",
    "Summarizer",
    "make_summarizer",
]


def make_summarizer(
    strategy: str, model: ChatModel | None = None, options: ModelOptions | None = None
) -> Summarizer:
    """The strategy called ``strategy``; ``llm`` needs a ``model`` (and takes ``options``);
    ``hybrid`` summarizes with the model when given one, else extractively."""
    if strategy == "extractive":
        return ExtractiveSummarizer()
    if strategy == "mask":
        return MaskSummarizer()
    if strategy == "hybrid":
        inner = LLMSummarizer(model, options=options) if model is not None else None
        return HybridSummarizer(inner)
    if strategy == "llm":
        if model is None:
            raise ConfigurationError(
                "the llm strategy needs a model: give --llm PROVIDER:MODEL (or set RECAP_LLM), "
                "or use --strategy extractive"
            )
        return LLMSummarizer(model, options=options)
    raise ConfigurationError(
        f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}"
    )
