"""recap: keep long LLM conversations inside their context budget.

The oldest part of a history is folded into a summary; the recent turns stay
verbatim; a tool call is never separated from its result; nothing is lost.

    from recap_memory import Compactor, Policy, from_openai, to_openai
    result = Compactor().compact_sync([from_openai(d) for d in history])
    compacted = [to_openai(m) for m in result.messages]
"""

from importlib.metadata import PackageNotFoundError, version

from recap_memory.chain import Chain, SummaryRow
from recap_memory.compactor import CompactionResult, Compactor, Report
from recap_memory.conversation import Conversation
from recap_memory.counting import Meter, Size, approx_tokens
from recap_memory.errors import (
    BackendError,
    ConfigurationError,
    ContextOverflowError,
    ContextTooLargeError,
    InputError,
    InvalidHistoryError,
    RecapError,
    SummaryRejected,
)
from recap_memory.messages import Message, ToolCall, from_openai, to_openai, validate_history
from recap_memory.policy import Budget, Policy, Trigger

try:
    __version__ = version("recap-memory")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "BackendError",
    "Budget",
    "Chain",
    "CompactionResult",
    "Compactor",
    "ConfigurationError",
    "ContextOverflowError",
    "ContextTooLargeError",
    "Conversation",
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
