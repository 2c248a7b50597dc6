"""The ``hybrid`` strategy: mask while masking is enough, summarize when it is not.

Observation masking keeps every message and paraphrases nothing, so it is tried
first: when the span with its tool outputs replaced by stubs fits the summary's
size cap, that is the fold. When it does not (long dialogue, many calls), the
span is summarized by the inner strategy (the model's, or extractive without one).
"""

from __future__ import annotations

from recap_memory.masking import mask_tool_result
from recap_memory.summarizers.base import Fold, FoldRequest, Summarizer
from recap_memory.summarizers.extractive import ExtractiveSummarizer


class HybridSummarizer(Summarizer):
    """See the module docstring."""

    name = "hybrid"

    def __init__(self, inner: Summarizer | None = None) -> None:
        self.inner = inner or ExtractiveSummarizer()

    async def fold(self, request: FoldRequest) -> Fold:
        """Masked span when it fits ``request.max_chars`` and saves something, else a summary."""
        masked = tuple(mask_tool_result(m) for m in request.messages)
        size = request.meter.messages(masked).chars
        if masked != tuple(request.messages) and size <= request.max_chars:
            return Fold(replacement=masked)
        return await self.inner.fold(request)
