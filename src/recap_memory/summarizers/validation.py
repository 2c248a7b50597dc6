"""Checks every summary passes before it may replace any history.

A rejected summary raises :class:`~recap_memory.errors.SummaryRejected` with a short
reason code; the compactor then leaves the history unchanged.

Reason codes: ``empty``, ``error_text``, ``template_tokens``, ``repetition``,
``echo`` (mostly lines copied from the input, when the input is given),
``longer_than_input``, ``over_limit``; the llm strategy adds ``truncated``.
"""

from __future__ import annotations

import re
import zlib

from recap_memory.errors import SummaryRejected

TEMPLATE_TOKENS = (
    "<|im_start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|begin_of_text|>",
    "<|endoftext|>",
    "<|end|>",
    "<|assistant|>",
    "<|user|>",
    "<|system|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "[INST]",
    "[/INST]",
    "<<SYS>>",
    "</s>",
    "<s>",
)
_TEMPLATE_RE = re.compile(r"<\|[a-z_]{2,30}\|>")
_ERROR_OPENINGS = re.compile(
    r"^\s*(error\b|exception\b|traceback \(most recent call last\)|i'?m sorry|i apologi[sz]e|"
    r"sorry, (but )?i|i (cannot|can'?t|am unable to|'m unable to)|as an ai\b|"
    r"(internal server error|bad gateway|service unavailable|rate limit)|"
    r"\{\s*\"error\")",
    re.IGNORECASE,
)


def validate_summary(
    text: str | None, *, source_chars: int, max_chars: int, source: str | None = None
) -> str:
    """Return the stripped summary, or raise :class:`SummaryRejected` saying why.

    ``source``, the text a model was asked to summarize, enables the ``echo`` check.
    """
    summary = (text or "").strip()
    if not summary:
        raise SummaryRejected("empty", "the summarizer returned no text")
    if _ERROR_OPENINGS.search(summary[:200]):
        raise SummaryRejected("error_text", f"looks like an error or refusal: {summary[:80]!r}")
    leaked = [t for t in TEMPLATE_TOKENS if t in summary] or _TEMPLATE_RE.findall(summary)
    if leaked:
        raise SummaryRejected("template_tokens", f"chat template tokens leaked: {leaked[0]}")
    if is_repetitive(summary):
        raise SummaryRejected("repetition", "the text repeats itself (runaway generation)")
    if source is not None and _is_echo(summary, source):
        raise SummaryRejected("echo", "the text mostly copies lines of its input")
    if len(summary) >= source_chars:
        raise SummaryRejected(
            "longer_than_input",
            f"summary ({len(summary)} chars) is not shorter than its input ({source_chars})",
        )
    if len(summary) > max_chars:
        raise SummaryRejected(
            "over_limit", f"summary ({len(summary)} chars) exceeds the limit ({max_chars})"
        )
    return summary


def is_repetitive(text: str) -> bool:
    """Runaway generation: one 6-word shingle repeated many times, or text that compresses to
    almost nothing."""
    words = text.lower().split()
    if len(words) >= 24:
        shingles = [" ".join(words[i : i + 6]) for i in range(len(words) - 5)]
        counts: dict[str, int] = {}
        for s in shingles:
            counts[s] = counts.get(s, 0) + 1
        top = max(counts.values())
        if top >= 4 and top * 6 >= len(words) * 0.3:
            return True
    raw = text.encode()
    return len(raw) >= 400 and len(zlib.compress(raw)) / len(raw) < 0.12


def _is_echo(text: str, source: str) -> bool:
    """Most of the text is long lines found verbatim in ``source`` (a model echoing its input)."""
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= 30]
    copied = sum(len(line) for line in lines if line in source)
    return len(lines) >= 3 and copied >= 0.8 * len(text)
