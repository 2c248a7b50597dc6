"""Compaction strategies behind one interface, and the registry that names them."""

from __future__ import annotations

from recap.errors import ConfigurationError
from recap.llm.base import ChatModel
from recap.summarizers.base import Fold, FoldRequest, Summarizer
from recap.summarizers.extractive import ExtractiveSummarizer
from recap.summarizers.llm import LLMSummarizer, Prompts
from recap.summarizers.mask import MaskSummarizer

STRATEGIES = ("extractive", "llm", "mask")

__all__ = [
    "STRATEGIES",
    "ExtractiveSummarizer",
    "Fold",
    "FoldRequest",
    "LLMSummarizer",
    "MaskSummarizer",
    "Prompts",
    "Summarizer",
    "make_summarizer",
]


def make_summarizer(strategy: str, model: ChatModel | None = None) -> Summarizer:
    """The strategy called ``strategy``; ``llm`` needs a ``model``."""
    if strategy == "extractive":
        return ExtractiveSummarizer()
    if strategy == "mask":
        return MaskSummarizer()
    if strategy == "llm":
        if model is None:
            raise ConfigurationError(
                "the llm strategy needs a model; pass one, or use --strategy extractive"
            )
        return LLMSummarizer(model)
    raise ConfigurationError(
        f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}"
    )
