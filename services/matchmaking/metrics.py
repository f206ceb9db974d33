"""The matchmaker's Prometheus metrics, on their own registry (tests run several matchmakers in
one process). Counters count in this process only; sum them over replicas. The queue depth is
the shared queue in Redis as this process saw it at its last tick: take max() over replicas."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    """Tickets by what became of them, tables formed, bot backfills, queue depth, ratings."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.enqueued = Counter(
            "arena_matchmaker_tickets_enqueued", "tickets created, by mode", ["mode"], registry=r
        )
        self.cancelled = Counter(
            "arena_matchmaker_tickets_cancelled",
            "queued tickets cancelled by their player, by mode",
            ["mode"],
            registry=r,
        )
        self.expired = Counter(
            "arena_matchmaker_tickets_expired",
            "queued tickets whose time-to-live ran out (nobody watched them), by mode",
            ["mode"],
            registry=r,
        )
        self.matched = Counter(
            "arena_matchmaker_tickets_matched",
            "tickets seated at a formed table, by mode",
            ["mode"],
            registry=r,
        )
        self.tables = Counter(
            "arena_matchmaker_tables_formed",
            "tables formed and published to arena:matches, by mode",
            ["mode"],
            registry=r,
        )
        self.backfills = Counter(
            "arena_matchmaker_bot_backfills",
            "formed tables whose empty seats went to bots, by mode",
            ["mode"],
            registry=r,
        )
        self.bot_seats = Counter(
            "arena_matchmaker_bot_seats", "seats given to bots, by mode", ["mode"], registry=r
        )
        self.conflicts = Counter(
            "arena_matchmaker_form_conflicts",
            "tables not formed because a "
            "ticket was taken meanwhile (another matchmaker, a cancel, an "
            "expiry)",
            registry=r,
        )
        self.wait = Histogram(
            "arena_matchmaker_wait_seconds",
            "enqueued to seated, per matched ticket",
            buckets=(0.25, 0.5, 1, 2, 5, 10, 20, 30, 45, 60, 120, 300),
            registry=r,
        )
        self.queue_depth = Gauge(
            "arena_matchmaker_queue_depth",
            "tickets waiting after this process' last tick, by mode",
            ["mode"],
            registry=r,
        )
        self.ratings = Counter(
            "arena_matchmaker_ratings_updates",
            "finished games handed to the ratings, by result (rated; duplicate: already counted)",
            ["result"],
            registry=r,
        )
        self._counters: dict[tuple[str, str], Counter] = {}
        self._depths: dict[str, Gauge] = {}

    def count(self, counter: str, label: str, amount: float = 1) -> None:
        """Increment a labelled counter (`enqueued`, `tables`, `ratings` ...) for one label
        value; each child is looked up once (`labels()` costs microseconds a call)."""
        child = self._counters.get((counter, label))
        if child is None:
            metric: Counter = getattr(self, counter)
            child = self._counters[(counter, label)] = metric.labels(label)
        child.inc(amount)

    def depth(self, mode: str, waiting: int) -> None:
        """Set the queue depth of `mode`."""
        child = self._depths.get(mode)
        if child is None:
            child = self._depths[mode] = self.queue_depth.labels(mode)
        child.set(waiting)
