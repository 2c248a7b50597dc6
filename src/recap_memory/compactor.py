"""The engine: plan a cut, fold the old span, validate, and assemble the new view.

:meth:`Compactor.compact` is the one async core; :meth:`Compactor.compact_sync`
wraps it for synchronous callers. It performs no I/O of its own: the
summarizer it is given may call a model, everything else is pure.

The view it returns is: system messages (unchanged, first), ONE user message
holding the summary chain, pinned messages carried verbatim, then the recent
turns verbatim. When the strategy fails — the model errors, the summary is
rejected — the fallback strategy (extractive by default) compacts instead and
the report says so (path ``fallback``, with the reason); with no fallback, or
when it fails too, the input comes back unchanged with the reason.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Generic, Literal, cast

from typing_extensions import TypeVar

from recap_memory.chain import (
    INSTRUCTIONS_HEADING,
    Chain,
    Ref,
    SummaryRow,
    split_view,
)
from recap_memory.chain import header as row_header
from recap_memory.conversation import Conversation
from recap_memory.counting import Meter, Size
from recap_memory.errors import (
    BackendError,
    ContextTooLargeError,
    InvalidHistoryError,
    RecapError,
    SummaryRejected,
)
from recap_memory.fitting import fit, too_large
from recap_memory.instructions import merge_instructions, standing_instructions
from recap_memory.kinds import as_kind, as_messages, kind_of
from recap_memory.llm.base import Usage
from recap_memory.masking import mask_tool_result
from recap_memory.messages import Message, validate_history
from recap_memory.planner import NOTHING_TO_FOLD, Plan, Skip, plan_compaction
from recap_memory.policy import MIN_SUMMARY_CHARS, Budget, Policy
from recap_memory.prefix import Known, Prefix, PrefixCache
from recap_memory.record import RecordReader, record_in
from recap_memory.summarizers.base import Fold, FoldRequest, Summarizer
from recap_memory.summarizers.extractive import ExtractiveSummarizer
from recap_memory.summarizers.validation import validate_summary
from recap_memory.sync import run_sync

log = logging.getLogger("recap_memory.compactor")
Path = Literal["summarized", "masked", "fallback", "skipped", "rejected"]
"""``fallback``: the configured strategy failed (see ``reason``) and the fallback compacted."""
DEFAULT_FALLBACK = ExtractiveSummarizer()
HEADER_ROOM = 80
"""Characters a row's header takes (its range of message ids and size), at most."""


@dataclass(frozen=True)
class Report:
    """What one compaction pass did (or why it did nothing)."""

    compacted: bool
    path: Path
    strategy: str
    reason: str | None = None
    messages_removed: int = 0
    chars_removed: int = 0
    summary_chars: int = 0
    covered: tuple[int, int] | None = None
    """First and last index (in the input) of the messages the summary covers."""
    covered_ids: tuple[Ref, Ref] | None = None
    """The same range as message ids (or indices where messages have none)."""
    carried: int = 0
    masked: int = 0
    size_before: Size = field(default_factory=Size)
    size_after: Size = field(default_factory=Size)
    model_calls: int = 0
    usage: tuple[Usage, ...] = ()
    """Every model call of the pass: model, prompt/completion tokens, duration, error."""
    elapsed_ms: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data."""
        return asdict(self)


M = TypeVar("M", default=Message)
"""The kind of message a caller holds: recap's, an OpenAI dict, a LangChain message."""


@dataclass(frozen=True)
class CompactionResult(Generic[M]):
    """The new view of the conversation (of the kind of messages given), the summary
    chain, and the report."""

    messages: list[M]
    chain: Chain
    report: Report


class Compactor:
    """Compacts conversations with one strategy under one policy."""

    def __init__(
        self,
        summarizer: Summarizer | None = None,
        policy: Policy | None = None,
        meter: Meter | None = None,
        *,
        fallback: Summarizer | None = DEFAULT_FALLBACK,
    ) -> None:
        """``fallback`` compacts when ``summarizer`` fails (extractive by default); with
        None, a failure leaves the history unchanged (Design A), the hard cap aside."""
        self.summarizer = summarizer or ExtractiveSummarizer()
        self.policy = policy or Policy()
        self.meter = meter or Meter()
        self.fallback = (
            fallback if fallback is not None and fallback.name != self.summarizer.name else None
        )
        self.unchanged_on_failure = fallback is None
        self._prefixes = PrefixCache()
        """Asked for with ``fallback=None``: a failed pass leaves the history exactly as it
        was (Design A). Otherwise, when every strategy fails, oversized tool outputs are
        still cut under the trigger."""

    def running_on(self, executor: Executor) -> Compactor:
        """The same compactor with its strategies' CPU-bound work on ``executor`` (the
        service gives a process pool: a long extractive pass then neither holds the event
        loop's interpreter lock nor makes it wait out its garbage collections)."""
        twin = copy.copy(self)
        twin.summarizer = self.summarizer.running_on(executor)
        twin.fallback = self.fallback.running_on(executor) if self.fallback else None
        return twin

    def with_policy(self, policy: Policy) -> Compactor:
        """The same strategy, fallback and meter under another policy."""
        twin = copy.copy(self)
        twin.policy = policy
        return twin

    def compact_sync(
        self,
        messages: Sequence[M],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        request_id: str | None = None,
        record: Sequence[M] | None = None,
    ) -> CompactionResult[M]:
        """:meth:`compact` for synchronous code: its own event loop, or a worker thread
        when called from inside a running one (Jupyter, an async web handler). A turn
        with nothing due is answered here, without either."""
        if (answer := self.answer_if_not_due(messages, tools=tools)) is not None:
            return answer
        work = self.compact(messages, tools=tools, request_id=request_id, record=record)
        return run_sync(work)

    async def compact(
        self,
        messages: Sequence[M],
        *,
        chain: Chain | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        request_id: str | None = None,
        record: Sequence[M] | RecordReader | None = None,
    ) -> CompactionResult[M]:
        """Compact ``messages`` when the policy says it is due.

        ``messages`` is a history as the model sees it (a summary message
        written by an earlier pass is recognised and its chain continued), or,
        with ``chain`` given, the un-summarized messages of a stored session. They
        may be recap messages, OpenAI chat dicts or LangChain messages: the result's
        messages are of the same kind (OpenAI dicts clean, ready for a provider), in a
        :class:`~recap_memory.conversation.Conversation` when given one (then a turn with
        nothing due costs O(new messages), not O(history)).
        ``tools`` are the tool schemas sent with every request (counted). ``record``,
        the full history (messages with ids) or a reader of it, lets a strategy that
        re-reads the raw record (the extractive one) fold from the messages the summary
        stands for instead of from its text.

        On a history (no ``chain``), the view returned is held within the hard cap
        (``policy.max``) and, once a pass was tried, under the trigger: the largest tool
        outputs are cut to head and tail, then masked, when the summary alone cannot
        make room. Raises :class:`ContextTooLargeError` when even that cannot meet
        ``policy.max``.
        """
        if chain is None and not self.policy.enabled:  # Design A: nothing read, nothing called
            disabled = Report(False, "skipped", self.summarizer.name, reason="disabled")
            return CompactionResult(list(messages), Chain(), disabled)
        if chain is None:
            known = self._read(messages, tools)
            if isinstance(known, CompactionResult):
                return known
            history = known.messages()
            kind = known.kind
        else:
            kind = kind_of(messages)
            history = as_messages(messages, kind)
        reader = record_in(record) if isinstance(record, Sequence) else record
        result = await self._compact(
            history,
            chain=chain,
            tools=tools,
            request_id=request_id,
            record=reader,
            view_chain=None if chain is not None else known.chain,
        )
        if chain is None and self.policy.enabled:  # a stored session is held by the service
            result = self._hold(result, tools)
        out = result.messages if kind == "recap" else as_kind(result.messages, kind)
        if isinstance(messages, Conversation):
            out = Conversation(out)
        if chain is None and result.report.compacted:  # the next turn extends it
            self._prefixes.remember(Prefix.read(out, self.meter, result.chain))
        return cast(CompactionResult[M], CompactionResult(out, result.chain, result.report))

    def answer_if_not_due(
        self, messages: Sequence[M], *, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> CompactionResult[M] | None:
        """What :meth:`compact` answers for a history with nothing due — the history as it
        is — computed here and now, without an event loop; None when a pass must look."""
        if not self.policy.enabled:
            return None
        read = self._read(messages, tools)
        return read if isinstance(read, CompactionResult) else None

    def _read(
        self, messages: Sequence[M], tools: Sequence[Mapping[str, Any]] | None
    ) -> CompactionResult[M] | Known:
        """The history as the prefix cache knows it, or the answer when nothing is due."""
        started = time.perf_counter()
        known = self._prefixes.read(messages, self.meter)
        quick = self._not_due(known, messages, tools, started)
        return quick if quick is not None else known

    def _not_due(
        self,
        known: Known,
        given: Sequence[M],
        tools: Sequence[Mapping[str, Any]] | None,
        started: float,
    ) -> CompactionResult[M] | None:
        """The answer without a pass when the history's known sizes say nothing is due
        (O(1) after :class:`PrefixCache` read it); None when a pass must look."""
        total = known.size + known.summary + self.meter.tools(tools)
        if self.policy.trigger.fires(total) or (
            self.policy.max is not None and not self.policy.max.allows(total)
        ):
            return None
        report = Report(
            compacted=False,
            path="skipped",
            strategy=self.summarizer.name,
            reason="under the trigger threshold",
            size_before=total,
            size_after=total,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        messages = given if isinstance(given, list) else list(given)
        return CompactionResult(messages, known.chain, report)

    async def _compact(
        self,
        messages: Sequence[Message],
        *,
        chain: Chain | None,
        tools: Sequence[Mapping[str, Any]] | None,
        request_id: str | None,
        record: RecordReader | None,
        view_chain: Chain | None = None,
    ) -> CompactionResult:
        """One pass; ``view_chain``: the chain at the front of ``messages`` (a view) when
        it is known exactly (with message ids), else it is read back from its text."""
        started = time.perf_counter()
        prefix = f"[{request_id}] " if request_id else ""
        if not self.policy.enabled:
            return self._unchanged(messages, chain or Chain(), "skipped", "disabled", started)
        validate_history(messages)
        if chain is None:
            body, parsed, positions = split_view(messages)
            chain = view_chain if view_chain is not None else parsed
        else:
            body, positions = list(messages), list(range(len(messages)))
        fixed = self.meter.tools(tools)
        if (summary_message := chain.message()) is not None:
            fixed = fixed + self.meter.message(summary_message)
        plan = await asyncio.to_thread(  # seconds for a long history: off the event loop
            plan_compaction, body, self.policy, self.meter, fixed=fixed
        )
        if isinstance(plan, Skip):
            return self._unchanged(messages, chain, "skipped", plan.reason, started, plan.size)

        folded = [body[i] for i in plan.fold]
        folded_size = plan.folded
        log.info(
            "%ssummarizer: session=%d chars, removing %d msgs (%d chars), keeping %d msgs",
            prefix, plan.size.chars, len(folded), folded_size.chars,
            len(body) - len(folded),
        )  # fmt: skip
        ref = _refs(body, positions)
        usage: list[Usage] = []

        async def attempt(summarizer: Summarizer) -> tuple[Fold, Chain, list[Message]]:
            """Fold with ``summarizer`` and assemble the view; raises when anything is wrong."""
            fold, new_chain = await self._fold(summarizer, plan, chain, body, ref, usage, record)
            view = _assemble(body, plan, fold, new_chain)
            validate_history(view)
            return fold, new_chain, view

        reason = None
        strategy = self.summarizer
        try:
            fold, new_chain, view = await attempt(strategy)
        except Exception as exc:
            reason = _failure(strategy, exc)
            if self.fallback is None:
                log.warning("%s%s, history unchanged", prefix, reason, exc_info=_is_bug(exc))
                return self._unchanged(
                    messages, chain, "rejected", reason, started, plan.size, usage
                )
            log.warning(
                "%s%s; compacting with the %s fallback",
                prefix, reason, self.fallback.name, exc_info=_is_bug(exc),
            )  # fmt: skip
            strategy = self.fallback
            try:
                fold, new_chain, view = await attempt(strategy)
            except Exception as again:
                reason = f"{reason}; the fallback failed too: {_failure(strategy, again)}"
                log.warning("%s%s, history unchanged", prefix, reason, exc_info=_is_bug(again))
                return self._unchanged(
                    messages, chain, "rejected", reason, started, plan.size, usage
                )

        after = self.meter.messages(view) + self.meter.tools(tools)
        if after.chars >= plan.size.chars:
            return self._unchanged(
                messages, chain, "skipped", WOULD_NOT_SHRINK, started,
                plan.size, usage,
            )  # fmt: skip
        summary_chars = len(fold.summary or "")
        elapsed = (time.perf_counter() - started) * 1000
        path: Path = (
            "fallback" if reason else "summarized" if fold.summary is not None else "masked"
        )
        report = Report(
            compacted=True,
            path=path,
            strategy=strategy.name,
            reason=reason,
            messages_removed=len(folded) if fold.summary is not None else 0,
            chars_removed=plan.size.chars - after.chars + summary_chars,
            summary_chars=summary_chars,
            covered=(positions[plan.fold[0]], positions[plan.fold[-1]]),
            covered_ids=(ref(plan.fold[0]), ref(plan.fold[-1])),
            carried=len(plan.carried),
            masked=len(plan.masked) + sum(1 for m in fold.replacement if m.role == "tool"),
            size_before=plan.size,
            size_after=after,
            model_calls=len(usage),
            usage=tuple(usage),
            elapsed_ms=round(elapsed, 3),
        )
        log.info(
            "%ssummarizer done: -%d chars, summary %d chars, %dms",
            prefix, report.chars_removed, summary_chars, elapsed,
        )  # fmt: skip
        return CompactionResult(view, new_chain, report)

    async def _fold(
        self,
        summarizer: Summarizer,
        plan: Plan,
        chain: Chain,
        body: Sequence[Message],
        ref: Callable[[int], Ref],
        usage: list[Usage],
        record: RecordReader | None = None,
    ) -> tuple[Fold, Chain]:
        """Run ``summarizer`` and validate its answer; returns the fold and the new chain."""
        folded = [body[i] for i in plan.fold]
        folded_size = plan.folded
        replaces = self._rows_to_update(chain)
        base = chain.merged(replaces) if replaces else None  # updated cumulatively
        standing = await asyncio.to_thread(standing_instructions, folded)  # reads every line
        instructions = merge_instructions(base.instructions if base else (), standing)
        cap = self.policy.summary_max
        first, last = base.first if base else ref(plan.fold[0]), ref(plan.fold[-1])
        source_total = folded_size.chars + (base.source_chars if base else 0)
        span = _span(plan, chain, base)
        header = row_header(span or (first, last), source_total)
        untouched = chain.rows[: len(chain.rows) - replaces]
        max_chars = (
            self.policy.summary_chars()
            - _rendered_chars(untouched)
            - len(header)
            - 1
            - sum(len(i) + 3 for i in instructions)
            - (len(INSTRUCTIONS_HEADING) + 1 if instructions else 0)
        )
        previous = base.text if base else None
        source_chars = folded_size.chars + len(previous or "")
        max_chars = min(max_chars, source_chars - 1)  # a summary must be shorter than its input
        kept = [body[i] for i in (*plan.system, *plan.carried)] + list(body[plan.cut :])
        raw: Sequence[Message] = ()
        if base is not None and record is not None and summarizer.reads_record:
            raw = await record(base.first, base.last, set(base.carried))
        request = FoldRequest(
            folded,
            max_chars,
            previous=previous,
            previous_chars=base.source_chars if base else 0,
            meter=self.meter,
            usage=usage,
            kept=kept,
            record=raw,
        )
        fold = await summarizer.fold(request)
        if fold.summary is None:
            replacement = list(fold.replacement)
            validate_history(replacement, allow_pending=False)
            if self.meter.messages(replacement).chars >= folded_size.chars:
                raise SummaryRejected("longer_than_input", "masking saved nothing")
            return fold, chain
        text = validate_summary(fold.summary, source_chars=source_chars, max_chars=max_chars)
        if cap.unit == "tokens" and self.meter.text(text).tokens > cap.value:
            raise SummaryRejected("over_limit", f"summary exceeds {cap.value} tokens")
        row = SummaryRow(
            text=text,
            first=first,
            last=last,
            messages=len(folded) + (base.messages if base else 0),
            instructions=instructions,
            carried=(*(base.carried if base else ()), *(ref(i) for i in plan.carried)),
            strategy=summarizer.name,
            source_chars=source_total,
            span=span,
        )
        return Fold(summary=text, model=fold.model), chain.with_row(row, replaces=replaces)

    def _rows_to_update(self, chain: Chain) -> int:
        """How many of the last rows the new summary updates (0: it starts a new row).

        The latest row is updated while it is under ``update_below`` (Design B), else a
        new row starts. Either needs room: the rows left as they are must leave at least
        a quarter of the summary's cap; when they do not, every row is merged into one
        cumulative update. So the whole chain stays within the cap however long the
        session grows.
        """
        latest = chain.latest
        if latest is None:
            return 0
        replaces = 1 if self.policy.update_below.allows(self.meter.text(latest.render())) else 0
        cap = self.policy.summary_chars()
        left = cap - _rendered_chars(chain.rows[: len(chain.rows) - replaces]) - HEADER_ROOM
        return replaces if left >= max(MIN_SUMMARY_CHARS, cap // 4) else len(chain.rows)

    def _hold(
        self, result: CompactionResult, tools: Sequence[Mapping[str, Any]] | None
    ) -> CompactionResult:
        """``result`` with its view held within the limits the policy sets (see
        :meth:`compact`): tool outputs cut, then masked, largest first."""
        report = result.report
        failed = report.path == "rejected" and not self.unchanged_on_failure
        tried = report.compacted or failed or report.reason in _NOTHING_TO_FOLD
        limits = self.policy.hold_limits(after_a_pass=tried)
        if not limits:
            return result  # nothing to hold it within: no need to measure it
        fixed = self.meter.tools(tools)
        view, changed = result.messages, 0
        for limit in limits:
            room = limit.value - fixed.get(limit.unit)
            view, n = fit(view, Budget(**{limit.unit: max(0, room)}), self.meter)
            changed += n
        size = self.meter.messages(view) + fixed
        if self.policy.max is not None and not self.policy.max.allows(size):
            raise ContextTooLargeError(too_large(view, self.policy.max, self.meter))
        if not changed:
            return result
        note = f"{changed} oversized tool output(s) cut to fit"
        report = replace(
            report,
            compacted=True,
            path=report.path if report.compacted else "masked",
            reason=f"{report.reason}; {note}" if report.reason else note,
            masked=report.masked + changed,
            size_after=size,
        )
        return CompactionResult(view, result.chain, report)

    def _unchanged(
        self,
        messages: Sequence[Message],
        chain: Chain,
        path: Path,
        reason: str,
        started: float,
        size: Size | None = None,
        usage: Sequence[Usage] = (),
    ) -> CompactionResult:
        elapsed = round((time.perf_counter() - started) * 1000, 3)
        size = size or Size()
        report = Report(
            compacted=False,
            path=path,
            strategy=self.summarizer.name,
            reason=reason,
            size_before=size,
            size_after=size,
            model_calls=len(usage),
            usage=tuple(usage),
            elapsed_ms=elapsed,
        )
        return CompactionResult(list(messages), chain, report)


WOULD_NOT_SHRINK = "compaction would not shrink the context"
_NOTHING_TO_FOLD = (NOTHING_TO_FOLD, WOULD_NOT_SHRINK)
"""Skip reasons after which the view is still held under the trigger (a pass was due)."""


def _rendered_chars(rows: Sequence[SummaryRow]) -> int:
    """Characters ``rows`` take in the summary message (with their separators)."""
    return sum(len(r.render()) + 2 for r in rows)


def _failure(summarizer: Summarizer, exc: Exception) -> str:
    """Why a strategy failed, in one line."""
    if isinstance(exc, SummaryRejected | InvalidHistoryError | BackendError):
        return f"{summarizer.name}: {exc}"
    return f"{summarizer.name} failed: {type(exc).__name__}: {exc}"


def _is_bug(exc: Exception) -> bool:
    """True for failures no backend or validator explains (log them with a traceback)."""
    return not isinstance(exc, RecapError)


def _span(plan: Plan, chain: Chain, base: SummaryRow | None) -> tuple[int, int] | None:
    """The numbers of the first and last message a new row covers (see
    :attr:`SummaryRow.span`): counted on from the chain's last number, or from the
    history's start when there is no chain yet; None when the chain's are unknown."""
    first, last = plan.fold[0], plan.fold[-1]
    if not chain.rows:
        return first + 1, last + 1  # the history starts at the conversation's start
    start = chain.next_number()
    if start is None:
        return None
    end = start + last - first  # what lies before the first folded message was carried
    if base is None:
        return start, end
    return (base.span[0], end) if base.span else None


def _refs(body: Sequence[Message], positions: Sequence[int]) -> Callable[[int], Ref]:
    """Maps an index of ``body`` to the message's id, or its input position when it has none."""

    def ref(index: int) -> Ref:
        message_id = body[index].id
        return message_id if message_id is not None else positions[index]

    return ref


def _assemble(body: Sequence[Message], plan: Plan, fold: Fold, chain: Chain) -> list[Message]:
    """System messages, the summary, carried messages, then the recent turns."""
    view = [body[i] for i in plan.system]
    if (summary := chain.message()) is not None:
        view.append(summary)
    view.extend(fold.replacement)
    view.extend(body[i] for i in plan.carried)
    masked = set(plan.masked)
    view.extend(
        mask_tool_result(m) if i in masked else m for i, m in enumerate(body) if i >= plan.cut
    )
    return view
