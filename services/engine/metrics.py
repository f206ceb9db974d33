"""The worker's Prometheus metrics, on their own registry (several workers may share a process
in tests)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    """Games active, actions by result, action latency, append conflicts, pending, cache hits."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.games_active = Gauge(
            "arena_engine_games_active",
            "games in this worker's cache that have not ended",
            registry=r,
        )
        self.actions = Counter(
            "arena_engine_actions", "SubmitAction calls by result", ["result"], registry=r
        )
        self.latency = Histogram(
            "arena_engine_action_latency_seconds",
            "SubmitAction latency",
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
            registry=r,
        )
        self.conflicts = Counter(
            "arena_engine_append_conflicts",
            "appends refused for a stale expected version",
            registry=r,
        )
        self.decisions_pending = Gauge(
            "arena_engine_decisions_pending",
            "decisions waiting for an answer (all workers)",
            registry=r,
        )
        self.cache = Counter(
            "arena_engine_cache_lookups", "hot-game cache lookups", ["hit"], registry=r
        )
        self._children: dict[tuple[str, str], Counter] = {}

    def count(self, counter: str, label: str) -> None:
        """Increment `actions` (by result) or `cache` (by hit) for one label value; the labelled
        children are looked up once (prometheus_client's `labels()` costs microseconds a call,
        paid on every answer otherwise)."""
        child = self._children.get((counter, label))
        if child is None:
            metric: Counter = getattr(self, counter)
            name = metric._labelnames[0]  # noqa: SLF001 - the one label each counter has
            child = self._children[(counter, label)] = metric.labels(**{name: label})
        child.inc()
