"""recap: keep long LLM conversations inside their context budget.

The oldest part of a history is folded into a summary; the recent turns stay
verbatim; a tool call is never separated from its result; nothing is lost.

    from recap import Compactor, Policy, from_openai, to_openai
    result = Compactor().compact_sync([from_openai(d) for d in history])
    compacted = [to_openai(m) for m in result.messages]
"""

from recap.chain import Chain, SummaryRow
from recap.compactor import CompactionResult, Compactor, Report
from recap.counting import Meter, Size, approx_tokens
from recap.errors import (
    BackendError,
    ConfigurationError,
    ContextOverflowError,
    InputError,
    InvalidHistoryError,
    RecapError,
    SummaryRejected,
)
from recap.messages import Message, ToolCall, from_openai, to_openai, validate_history
from recap.policy import Budget, Policy, Trigger

__version__ = "0.1.0"

__all__ = [
    "BackendError",
    "Budget",
    "Chain",
    "CompactionResult",
    "Compactor",
    "ConfigurationError",
    "ContextOverflowError",
    "InputError",
    "InvalidHistoryError",
    "Message",
    "Meter",
    "Policy",
    "RecapError",
    "Report",
    "Size",
    "SummaryRejected",
    "SummaryRow",
    "ToolCall",
    "Trigger",
    "__version__",
    "approx_tokens",
    "from_openai",
    "to_openai",
    "validate_history",
]
