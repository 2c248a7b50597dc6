"""One compaction pass of a stored session: claim, load, compact, commit, tell.

The model call runs outside any transaction, under a lease renewed while it
runs. Whatever happens — a summary, a skip, a model failure, a crash of this
process — the session's row says what is left to do: a failed pass leaves it
due with a backoff; a crash leaves the lease to expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from recap_memory.compactor import CompactionResult, Compactor, Report
from recap_memory.errors import NotFoundError
from recap_memory.logcontext import log_context
from recap_memory.service.events import EventBus
from recap_memory.service.metrics import Metrics
from recap_memory.store import Claim, LeaseLost, Loaded, Store, usage_events
from recap_memory.store.models import SummaryRecord
from recap_memory.store.owners import lease_owner

log = logging.getLogger("recap_memory.service")


@dataclass(frozen=True)
class Outcome:
    """What a pass did: ``path`` is llm / extractive / fallback / skipped / failed / lost."""

    path: str
    reason: str | None = None
    summary: SummaryRecord | None = None
    result: CompactionResult | None = None


@dataclass(frozen=True)
class Backoff:
    """Delay before retrying a session whose pass failed: base × 2^(failures), capped."""

    base_s: float
    max_s: float

    def delay(self, failures: int) -> dt.timedelta:
        """The wait after ``failures`` failures in a row."""
        return dt.timedelta(seconds=min(self.max_s, self.base_s * 2 ** max(0, failures)))


def accounted_path(report: Report) -> str:
    """How a pass that compacted is counted: ``fallback``, or the strategy that did it."""
    return "fallback" if report.path == "fallback" else report.strategy


class CompactionRunner:
    """Runs passes for the worker (due sessions) and for requests (one session, now)."""

    def __init__(
        self,
        store: Store,
        compactor: Compactor,
        bus: EventBus,
        metrics: Metrics,
        *,
        lease: dt.timedelta,
        backoff: Backoff,
        owner: str | None = None,
    ) -> None:
        self.store = store
        self.compactor = compactor
        self.bus = bus
        self.metrics = metrics
        self.lease = lease
        self.backoff = backoff
        self.owner = owner or lease_owner()
        self._detached: set[asyncio.Task[Outcome]] = set()

    async def run_due(self) -> Outcome | None:
        """Compact the session due longest, if any is claimable; None when none is."""
        claim = await self.store.claim_due(self.owner, self.lease)
        return None if claim is None else await self._run(claim, self.compactor)

    async def run_now(
        self, tenant: str, session: str, *, force: bool = False, request_id: str | None = None
    ) -> Outcome:
        """Compact one session now (when due, or always with ``force``); raises
        :class:`recap_memory.errors.BusyError` while another pass holds it."""
        claim = await self.store.claim(tenant, session, self.owner, self.lease)
        compactor = self.compactor.with_policy(self.compactor.policy.forced()) if force else None
        return await self._run(claim, compactor or self.compactor, request_id)

    async def start_now(
        self, tenant: str, session: str, *, request_id: str | None = None
    ) -> asyncio.Task[Outcome]:
        """Claim one session now (:class:`recap_memory.errors.BusyError` while another pass
        holds it) and run its pass as a task that outlives whoever waits for it: a request
        that stops waiting leaves the pass to finish under its lease. :meth:`stop` cancels
        the ones still running."""
        claim = await self.store.claim(tenant, session, self.owner, self.lease)
        task = asyncio.create_task(self._run(claim, self.compactor, request_id))
        self._detached.add(task)
        task.add_done_callback(self._detached.discard)
        return task

    async def stop(self) -> None:
        """Cancel the passes :meth:`start_now` left running (they give their leases back)."""
        for task in list(self._detached):
            task.cancel()
        for task in list(self._detached):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(
        self, claim: Claim, compactor: Compactor, request_id: str | None = None
    ) -> Outcome:
        request_id = request_id or uuid.uuid4().hex[:8]
        with log_context(request=request_id, session=claim.uuid):
            return await self._pass(claim, compactor, request_id)

    async def _pass(self, claim: Claim, compactor: Compactor, request_id: str) -> Outcome:
        """One pass over a leased session: compact, commit, publish, account."""
        started = time.perf_counter()
        await self.bus.publish("summarization.started", claim.uuid)
        loaded: Loaded | None = None
        result: CompactionResult | None = None
        try:
            loaded = await self.store.load(claim.session_id)
            async with self._renewing(claim):
                result = await compactor.compact(
                    loaded.body,
                    chain=loaded.chain,
                    request_id=request_id,
                    record=self.store.record_reader(claim.session_id),
                )
            outcome = await self._finish(claim, loaded, result)
        except asyncio.CancelledError:  # shutting down: hand the session to another worker
            with contextlib.suppress(Exception):
                await self.store.release(claim)
            raise
        except LeaseLost as exc:
            outcome = await self._lost(claim, result, str(exc))
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            log.exception("[%s] compaction of session %s failed", request_id, claim.uuid)
            outcome = await self._failed(claim, loaded, None, reason)
        self.metrics.compactions.labels(outcome.path).inc()
        self.metrics.compaction_seconds.observe(time.perf_counter() - started)
        return outcome

    async def _finish(self, claim: Claim, loaded: Loaded, result: CompactionResult) -> Outcome:
        report = result.report
        if report.compacted and result.chain.latest is not None and result.chain != loaded.chain:
            path = accounted_path(report)
            events = usage_events(claim, result, path=path, reason=report.reason)
            summary = await self.store.commit(claim, loaded, result, events)
            self.metrics.chars_compacted.inc(max(0, report.chars_removed))
            await self.bus.publish(
                "summarization.finished",
                claim.uuid,
                path=path,
                reason=report.reason,
                summary=summary_data(summary),
                messages_removed=report.messages_removed,
                chars_removed=report.chars_removed,
                context={
                    "chars_before": report.size_before.chars,
                    "chars_after": report.size_after.chars,
                    "tokens_before": report.size_before.tokens,
                    "tokens_after": report.size_after.tokens,
                },
            )
            return Outcome(path, report.reason, summary, result)
        if report.path == "skipped" or report.compacted:
            reason = report.reason or "nothing to summarize"
            await self.store.skip(
                claim, loaded, usage_events(claim, result, path="skipped", reason=reason)
            )
            await self.bus.publish("summarization.skipped", claim.uuid, reason=reason)
            return Outcome("skipped", reason, result=result)
        return await self._failed(claim, loaded, result, report.reason or "rejected")

    async def _failed(
        self, claim: Claim, loaded: Loaded | None, result: CompactionResult | None, reason: str
    ) -> Outcome:
        """Leave the session due, retried after a backoff; record and announce why."""
        try:
            record = await self.store.get_session(claim.tenant, claim.uuid)
            retry_in = self.backoff.delay(record.failures)
            events = usage_events(claim, result, path="failed", reason=reason)
            await self.store.fail(claim, loaded, reason, retry_in, events)
        except NotFoundError:
            return await self._lost(claim, result, "the session was deleted during the pass")
        except LeaseLost as exc:  # another worker has the session now: its outcome stands
            return await self._lost(claim, result, str(exc))
        await self.bus.publish(
            "summarization.failed",
            claim.uuid,
            reason=reason,
            retry_in_s=retry_in.total_seconds(),
        )
        return Outcome("failed", reason, result=result)

    async def _lost(self, claim: Claim, result: CompactionResult | None, reason: str) -> Outcome:
        """The pass lost its session (another worker took the lease, or it was deleted): drop
        the result, keep the spend of the model calls it made, and say it was superseded —
        not failed: the session's own outcome is the other worker's (or none)."""
        log.warning("session %s: %s; this pass is dropped", claim.uuid, reason)
        spent = usage_events(claim, result, path="lost", reason=reason)
        try:
            await self.store.record_events([e for e in spent if e.kind == "model_call"])
        except Exception:
            log.exception("could not record the model calls of session %s's pass", claim.uuid)
        await self.bus.publish("summarization.superseded", claim.uuid, reason=reason)
        return Outcome("lost", reason, result=result)

    @contextlib.asynccontextmanager
    async def _renewing(self, claim: Claim) -> AsyncIterator[None]:
        """Keep the lease alive while the block runs (a long model call)."""

        async def renew() -> None:
            while True:
                await asyncio.sleep(self.lease.total_seconds() / 3)
                try:
                    if not await self.store.renew(claim, self.lease):
                        return  # lost: the commit will find out and drop the result
                except Exception as exc:  # a blip of the database: try again next time
                    log.warning("renewing the lease on session %s failed: %s", claim.uuid, exc)

        task = asyncio.create_task(renew())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def summary_data(summary: SummaryRecord) -> dict[str, Any]:
    """A summary row as the API shows it."""
    return {
        "id": summary.id,
        "episode_range": f"{summary.first_message_id}-{summary.last_message_id}",
        "first_message_id": summary.first_message_id,
        "last_message_id": summary.last_message_id,
        "first_position": summary.first_position,
        "last_position": summary.last_position,
        "content": summary.text,
        "instructions": list(summary.instructions),
        "carried": list(summary.carried),
        "messages": summary.messages,
        "source_chars": summary.source_chars,
        "chars": summary.chars,
        "tokens": summary.tokens,
        "strategy": summary.strategy,
        "model": summary.model,
        "created_at": summary.created_at.isoformat(),
        "superseded_by": summary.superseded_by,
    }
