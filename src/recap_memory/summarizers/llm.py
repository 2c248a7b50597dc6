"""The ``llm`` strategy: a model writes the summary, folding long spans in chunks.

The span is never truncated to fit the model. It is cut into chunks that each
fit the model's window together with the prompt, the running summary and the
completion; the first chunk gets the *fresh* prompt, every later one the
*cumulative* prompt (previous summary + new exchanges, Design B). Every
intermediate summary is validated; a rejected or cut-off answer is asked for
once more (sampling may do better), then stops the fold. The number of calls
is bounded by twice the number of chunks: it never loops. Every call, failed
ones included, is recorded in ``request.usage``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from recap_memory.counting import Meter
from recap_memory.errors import BackendError, ContextOverflowError, SummaryRejected
from recap_memory.llm.base import ChatModel, Completion, ModelOptions, Usage
from recap_memory.summarizers.base import Fold, FoldRequest, Style, Summarizer, transcript_lines
from recap_memory.summarizers.validation import validate_summary

STRUCTURED = """\
You are compacting the earlier part of an agent's working session so the agent \
can continue with less context. Summarize the transcript below in exactly this form:

**Investigating:** <what the user asked for and what is being worked on>
**Key findings:**
- <one finding per line, with specifics: numbers, service names, ids, timestamps>
**Ruled out:** <what was checked and excluded>
**Current state:** <where the work stands and the next step>

Copy identifiers, numbers and names exactly. Add nothing that is not in the \
transcript. At most {max_chars} characters.

Transcript:
{transcript}"""

FRESH = """\
Summarize the conversation below in 3-5 sentences, in the third person. \
Paraphrase; no filler. Keep names, numbers, dates and decisions exactly. \
At most {max_chars} characters.

Conversation:
{transcript}"""

CUMULATIVE = """\
Here is a summary of a conversation so far:
{previous}

Here are the exchanges that followed:
{transcript}

Write one updated summary that keeps everything important from the summary and \
adds the new exchanges, in the same form as the summary. Third person, no \
filler; keep names, numbers, dates and identifiers exactly. At most {max_chars} characters."""


MIN_ROOM = 64
"""Fewest transcript tokens worth a request; fewer means the window is too small."""
WINDOW_SHARE = 0.9
"""Share of the model's window planned for: token counts are estimates, keep a margin."""


class Prompts(BaseModel):
    """Prompt templates; override any of them. Fields: ``{transcript}``,
    ``{previous}`` (cumulative only), ``{max_chars}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    structured: str = STRUCTURED
    fresh: str = FRESH
    cumulative: str = CUMULATIVE

    def first(self, style: Style) -> str:
        """The template for a span with no summary yet."""
        return self.structured if style == "agent" else self.fresh


class LLMSummarizer(Summarizer):
    """Summaries written by a :class:`~recap_memory.llm.base.ChatModel`."""

    name = "llm"

    def __init__(
        self,
        model: ChatModel,
        *,
        prompts: Prompts | None = None,
        options: ModelOptions | None = None,
        meter: Meter | None = None,
        rejected_retries: int = 1,
    ) -> None:
        self.model = model
        self.prompts = prompts or Prompts()
        self.options = options or ModelOptions()
        self.meter = meter or Meter()
        self.rejected_retries = rejected_retries

    async def fold(self, request: FoldRequest) -> Fold:
        """Fold the span chunk by chunk (see the module docstring)."""
        pending = [line for m in request.messages for line in transcript_lines(m)]
        summary = request.previous
        while pending:
            template = self.prompts.cumulative if summary else self.prompts.first(request.style)
            room = self._room(template, summary, request.max_chars)
            while True:  # shrink the chunk until the model's own count says it fits
                chunk, rest = _take(pending, room, self.meter)
                prompt = template.format(
                    transcript=chunk, previous=summary or "", max_chars=request.max_chars
                )
                exact = await self.model.count_tokens([{"role": "user", "content": prompt}])
                limit = self.model.context_window - self.options.max_tokens
                if exact is None or exact <= limit:
                    break
                room = self._checked(room * limit // exact - 8, exact)
            pending = rest
            for retry in range(self.rejected_retries + 1):
                completion = await self._call(prompt, request.usage)
                try:
                    summary = _accept(completion, chunk, summary, request.max_chars, template)
                    break
                except SummaryRejected:
                    if retry == self.rejected_retries:
                        raise
        return Fold(summary=summary, model=self.model.name)

    async def _call(self, prompt: str, usage: list[Usage]) -> Completion:
        """One request to the model, recorded in ``usage`` whether it succeeds or not."""
        try:
            completion = await self.model.execute(
                [{"role": "user", "content": prompt}], self.options
            )
        except BackendError as exc:
            usage.append(Usage(self.model.name, None, None, 0.0, exc.attempts, str(exc)))
            raise
        usage.append(Usage.of(completion))
        return completion

    def _room(self, template: str, summary: str | None, max_chars: int) -> int:
        """Tokens left for transcript in one request; raises when too few are left."""
        fixed = template.format(transcript="", previous=summary or "", max_chars=max_chars)
        used = self.meter.text(fixed).tokens + self.meter.message_overhead_tokens
        window = int(self.model.context_window * WINDOW_SHARE)
        return self._checked(window - self.options.max_tokens - used)

    def _checked(self, room: int, prompt_tokens: int | None = None) -> int:
        """``room``, or :class:`ContextOverflowError` when it is too small to be worth a call."""
        if room >= MIN_ROOM:
            return room
        measured = f" (a prompt measured {prompt_tokens} tokens)" if prompt_tokens else ""
        raise ContextOverflowError(
            f"{self.model.name}'s window ({self.model.context_window} tokens) leaves "
            f"{room} tokens for the transcript{measured}; use a model with a larger window "
            "or a smaller summary_max / max_tokens"
        )


def _accept(
    completion: Completion, chunk: str, previous: str | None, max_chars: int, template: str
) -> str:
    """The validated summary text of ``completion`` for ``chunk`` (and ``previous``), the
    answer to ``template``'s instructions (which it must not repeat)."""
    text = validate_summary(
        completion.text,
        source_chars=len(chunk) + len(previous or ""),
        max_chars=max_chars,
        source=chunk,
        instructions=template,
    )
    if completion.truncated:
        raise SummaryRejected(
            "truncated", "the model stopped at max_tokens; the summary is cut off"
        )
    return text


def _take(pending: Sequence[str], room: int, meter: Meter) -> tuple[str, list[str]]:
    """The next chunk of at most ``room`` tokens, and the lines left after it.

    A line that does not fit is split to fill the chunk (never truncated), so
    chunks are full and every chunk consumes input: the fold always ends.
    """
    chunk: list[str] = []
    used = 0
    for n, line in enumerate(pending):
        cost = meter.text(line).tokens + 1
        if used + cost <= room:
            chunk.append(line)
            used += cost
            continue
        if chunk and room - used < MIN_ROOM:
            return "\n".join(chunk), list(pending[n:])
        head, tail = _split_to_fit(line, room - used, meter)
        return "\n".join([*chunk, head]), [tail, *pending[n + 1 :]]
    return "\n".join(chunk), []


def _split_to_fit(line: str, room: int, meter: Meter) -> tuple[str, str]:
    """Split ``line`` so its head fits ``room`` tokens (at a space when possible)."""
    size = max(1, len(line) * room // max(1, meter.text(line).tokens + 1))
    while size > 1 and meter.text(line[:size]).tokens + 1 > room:
        size = size * 3 // 4
    space = line.rfind(" ", size // 2, size)
    cut = space if space > 0 else size
    return line[:cut], line[cut:]
