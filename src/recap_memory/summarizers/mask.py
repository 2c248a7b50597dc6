"""The ``mask`` strategy: old tool outputs replaced by stubs, nothing paraphrased."""

from __future__ import annotations

from recap_memory.masking import mask_tool_result
from recap_memory.summarizers.base import Fold, FoldRequest, Summarizer


class MaskSummarizer(Summarizer):
    """Observation masking: keeps every message, elides the tool outputs of the span."""

    name = "mask"

    async def fold(self, request: FoldRequest) -> Fold:
        """Replace each tool result in the span by a stub naming what was elided."""
        return Fold(replacement=tuple(mask_tool_result(m) for m in request.messages))
