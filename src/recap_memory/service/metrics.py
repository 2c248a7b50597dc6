"""Prometheus metrics of one service instance (its own registry, never the global one)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest


class Metrics:
    """Counters and histograms the service updates; :meth:`render` is the ``/metrics`` text."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.messages = Counter(
            "recap_messages_appended", "Messages appended", registry=self.registry
        )
        self.compactions = Counter(
            "recap_compactions",
            "Compaction passes by path (llm, extractive, fallback, skipped, failed)",
            ["path"],
            registry=self.registry,
        )
        self.chars_compacted = Counter(
            "recap_chars_compacted", "Characters removed from contexts", registry=self.registry
        )
        self.compaction_seconds = Histogram(
            "recap_compaction_seconds", "Duration of compaction passes", registry=self.registry
        )
        self.requests = Histogram(
            "recap_http_request_seconds",
            "HTTP request duration by route and status",
            ["method", "route", "status"],
            registry=self.registry,
        )

    def render(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)
