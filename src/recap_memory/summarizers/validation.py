"""Checks every summary passes before it may replace any history.

A rejected summary raises :class:`~recap_memory.errors.SummaryRejected` with a short
reason code; the compactor then leaves the history unchanged. The text is read as a
person would read it: Unicode-normalised (NFKC, so fullwidth ``<｜…｜>`` tokens and
curly apostrophes look like their ASCII twins), a leading label ("Summary:") and
quoted speech set aside where they would mislead.

Reason codes:

- ``empty``; ``reasoning`` (a reasoning block with no answer after it; a closed
  ``<think>…</think>`` block before a good summary is stripped, not rejected);
- ``error_text`` (an error page, a stack trace, an API error body) and ``refusal``
  (an apology or refusal opening the text, a refusal of the task anywhere, the model
  speaking as "an AI language model");
- ``template_tokens`` (special tokens of any chat-template family, outside code);
- ``role_turn`` (a leaked dialogue turn: ``Human:``, ``### Instruction``…);
- ``prompt_echo`` (sentences of the instructions it was given);
- ``repetition``, ``echo`` (mostly lines copied from the input, when it is given),
  ``longer_than_input``, ``over_limit``; the llm strategy adds ``truncated``.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Iterable

from recap_memory.errors import SummaryRejected

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "´": "'", "“": '"', "”": '"'})

_REASONING_BLOCK = re.compile(
    r"<(think|thinking|thought|reasoning|reflection|scratchpad)>.*?</\1>|◁think▷.*?◁/think▷",
    re.IGNORECASE | re.DOTALL,
)
_REASONING_OPEN = re.compile(
    r"<(think|thinking|thought|reasoning|reflection|scratchpad)>|◁think▷", re.IGNORECASE
)
_REASONING_CLOSE = re.compile(
    r"</(think|thinking|thought|reasoning|reflection|scratchpad)>|◁/think▷", re.IGNORECASE
)

_LABEL = re.compile(
    r"^\s*[#*_>\s]*(?:here(?:'s| is) (?:an? |the |my )?(?:updated |concise |brief )?summary"
    r"[^:\n]{0,60}|(?:updated |conversation |final )?summary|answer|response|output)"
    r"\s*[*_]*\s*(?::|\n)[*_\s]*",
    re.IGNORECASE,
)
_OPENING_REFUSAL = re.compile(
    r"^(?:i'?m (?:so |very |really |truly )?sorry|i am (?:so |very |really )?sorry|sorry[,.!]|"
    r"(?:my )?apologies|i apologi[sz]e|unfortunately,? i\b|regrettably,? i\b|"
    r"i (?:cannot|can ?not|can'?t|won'?t|will not|am unable|'m unable|am not able|'m not able|"
    r"do not have|don'?t have|must decline|must refuse|refuse)\b|"
    r"as an? (?:ai|language model|large language model|llm|assistant)\b)",
    re.IGNORECASE,
)
_TASK = (
    r"(?:summari[sz]\w*|(?:provide|create|write|give|produce|generate|offer|make)\s+(?:you\s+)?"
    r"(?:a|an|the|this|that|any|such)?\s*(?:\w+\s+)?summary|(?:help|assist)(?: you)? with "
    r"(?:this|that|your|the|such)\b|comply|fulfil+|(?:complete|process|handle) "
    r"(?:this|that|the|your) (?:request|task|conversation|transcript|text|content)|"
    r"do (?:that|this)\b)"
)
_REFUSAL_ANYWHERE = re.compile(
    r"\bi(?:\s*'m|\s+am)?\s*(?:cannot|can ?not|can't|won't|will not|unable to|not able to|"
    r"must decline to|must refuse to|not allowed to|do not feel comfortable|"
    r"don't feel comfortable)\s+(?:\w+\s+){0,3}?"
    + _TASK
    + r"|\bas an? (?:ai|artificial intelligence|language model|large language model|llm|"
    r"ai (?:language )?model|ai assistant)\b"
    r"|\bi(?:'m| am) (?:just |only )?an? (?:ai|language model|large language model)\b",
    re.IGNORECASE,
)
_ERROR = re.compile(
    r"^\s*(?:error\b|exception\b|traceback \(most recent call last\)|"
    r"(?:\d{3}\s+)?(?:internal server error|bad gateway|service unavailable|gateway time-?out|"
    r"rate limit(?:ed| exceeded)?|too many requests)\b|\{\s*\"(?:error|detail)\"|"
    r"<!doctype html|<html\b|\d{3}\s+(?:bad request|unauthorized|forbidden|not found)\b)",
    re.IGNORECASE,
)
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
_QUOTED = re.compile(r'"[^"\n]{0,400}"|(?<!\w)\'[^\'\n]{1,400}?\'(?!\w)')
_SPEAKER_LINE = re.compile(r"^\s*(?:[-*•]\s+|>\s*)(?:\*\*)?[^\W\d_][\w .'-]{0,40}(?:\*\*)?:\s")
_QUOTE_LINE = re.compile(r"^\s*>")

TEMPLATE_TOKENS = (
    "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_CALLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
)  # fmt: skip
"""Bracketed special tokens (Llama 2, Mistral) found anywhere outside code."""
_TEMPLATE_RE = re.compile(
    r"<\|[^|<>\n]{1,60}\|>"  # <|im_start|>, <|eot_id|>, <|END_OF_TURN_TOKEN|>, <｜…｜> (NFKC)
    r"|</?(?:s|eos|bos|pad|unk|eot|eom|sep|cls|mask|start_of_turn|end_of_turn|"
    r"start_of_image|end_of_image|tool_call|tool_response|function_call|im_start|im_end|"
    r"extra_id_\d+|unused\d+)>",
    re.IGNORECASE,
)
_ROLE_TURN = re.compile(
    r"^(?:human|assistant|ai|system|user)\s*:\s*\S"
    r"|^#{2,4}\s*(?:instruction|instructions|input|response|human|assistant|user|system)\b"
    r"|^\[(?:user|assistant|system)\]",
    re.IGNORECASE | re.MULTILINE,
)
_TRANSCRIPT_TURN = re.compile(r"^(?:human|assistant)\s*:", re.IGNORECASE)
_PROMPT_PHRASES = (
    "you are compacting the earlier part",
    "summarize the transcript below",
    "summarize the conversation below",
    "summarize the following conversation",
    "write one updated summary",
    "here are the exchanges that followed",
    "copy identifiers, numbers and names exactly",
    "add nothing that is not in the transcript",
    "create a summary of the conversation above",
    "extend the summary by taking into account",
    "you are a helpful assistant",
    "in exactly this form",
    "<what the user asked for",
)
"""Instructions of recap's own prompts and common peers' (a model that echoes its prompt)."""


def validate_summary(
    text: str | None,
    *,
    source_chars: int,
    max_chars: int,
    source: str | None = None,
    instructions: str | None = None,
) -> str:
    """Return the summary (stripped, a closed reasoning block before it removed), or
    raise :class:`SummaryRejected` saying why.

    ``source``, the text a model was asked to summarize, enables the ``echo`` check;
    ``instructions``, the prompt it was given without that text, adds its sentences to
    the ``prompt_echo`` check.
    """
    summary = strip_reasoning((text or "").strip())
    if not summary:
        raise SummaryRejected("empty", "the summarizer returned no text")
    readable = unicodedata.normalize("NFKC", summary).translate(_APOSTROPHES)
    check_readable(readable, instructions)
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


def strip_reasoning(text: str) -> str:
    """``text`` without its closed reasoning blocks (``<think>…</think>`` and kin), and
    without what precedes a lone closing tag (templates that open the block in the
    prompt); raises ``reasoning`` when a block is opened and never closed."""
    stripped = _REASONING_BLOCK.sub("", text)
    closes = list(_REASONING_CLOSE.finditer(stripped))
    if closes:
        stripped = stripped[closes[-1].end() :]
    if _REASONING_OPEN.search(stripped):
        raise SummaryRejected("reasoning", "a reasoning block with no answer after it")
    if stripped.strip() == "" and text.strip():
        raise SummaryRejected("reasoning", "only reasoning, no summary after it")
    return stripped.strip()


def check_readable(text: str, instructions: str | None = None) -> None:
    """Raise :class:`SummaryRejected` when normalised ``text`` is an error, a refusal,
    leaks template tokens or dialogue turns, or echoes the prompt."""
    body = _LABEL.sub("", text, count=1).lstrip()
    if _ERROR.match(body):
        raise SummaryRejected("error_text", f"looks like an error: {body[:80]!r}")
    if _OPENING_REFUSAL.match(body):
        raise SummaryRejected("refusal", f"opens with an apology or refusal: {body[:80]!r}")
    prose = _CODE.sub(" ", body)
    if leaked := _template_token(prose):
        raise SummaryRejected("template_tokens", f"chat template tokens leaked: {leaked}")
    for line in _own_lines(prose):
        if match := _REFUSAL_ANYWHERE.search(_QUOTED.sub(" ", line)):
            raise SummaryRejected("refusal", f"refuses the task: {match.group(0)!r}")
    if turn := _leaked_turn(prose):
        raise SummaryRejected("role_turn", f"a dialogue turn leaked into it: {turn!r}")
    if echoed := _prompt_echo(text, instructions):
        raise SummaryRejected("prompt_echo", f"it repeats its instructions: {echoed!r}")


def _template_token(text: str) -> str | None:
    found = next((t for t in TEMPLATE_TOKENS if t in text), None)
    if found:
        return found
    match = _TEMPLATE_RE.search(text)
    return match.group(0) if match else None


def _own_lines(text: str) -> Iterable[str]:
    """The lines written in the summarizer's own voice: not a speaker's quoted line
    (``- Anna: …``, ``> …``) and not quoted speech."""
    for line in text.splitlines():
        if not _SPEAKER_LINE.match(line) and not _QUOTE_LINE.match(line):
            yield line


def _leaked_turn(text: str) -> str | None:
    """A dialogue turn continuing after the summary (``Human:``, ``### Instruction``),
    or a summary that is itself a ``Human:``/``Assistant:`` transcript."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for n, line in enumerate(lines):
        match = _ROLE_TURN.match(line)
        if match is None:
            continue
        if n > 0 or _TRANSCRIPT_TURN.match(line) or line.startswith("#"):
            return line[:60]
    return None


def _prompt_echo(text: str, instructions: str | None) -> str | None:
    lowered = " ".join(text.lower().split())
    phrases = list(_PROMPT_PHRASES)
    if instructions:
        phrases.extend(_sentences_of(instructions))
    return next((p for p in phrases if p in lowered), None)


def _sentences_of(instructions: str) -> list[str]:
    """The instruction sentences worth matching: six words or more, no placeholder."""
    flat = " ".join(re.sub(r"\{[a-z_]+\}", "\n", instructions.lower()).split())
    sentences = re.split(r"(?<=[.:!?])\s+", flat)
    return [s.rstrip(".:") for s in sentences if len(s.split()) >= 6]


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
