"""The worker's Prometheus metrics, on their own registry (several workers may share a process
in tests)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from ..observability import Latency


class Metrics:
    """Games active, actions by result, action latency, append conflicts, pending, cache hits,
    open bot sessions."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.games_active = Gauge(
            "arena_engine_games_active",
            "games in this worker's cache that have not ended",
            registry=r,
        )
        self.latency = Latency(  # (observability.py: a Histogram without a lock)
            "arena_engine_action_latency_seconds",
            "SubmitAction latency",
            (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
        )
        r.register(self.latency)
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
        # read when scraped (the worker sets its function: `len(games.sessions.open)`)
        self.bot_sessions = Gauge(
            "arena_engine_bot_sessions",
            "bot workers' sessions open on this worker: bot decisions are pushed on them "
            "(none: they go through the decisions stream)",
            registry=r,
        )
        # counted in plain ints, read at scrape time: a prometheus_client Counter takes a lock
        # per increment, paid on every answer (measured ~3% of an engine worker's CPU)
        self.counts: dict[tuple[str, str], int] = {}
        r.register(_Counts(self.counts))

    def count(self, counter: str, label: str, n: int = 1) -> None:
        """Count `n` `actions` (by result), `cache` lookups (by hit), `worlds` calls, games
        `ended` by the platform (by reason), `sweep` failures or logged answers by `tables`."""
        key = (counter, label)
        self.counts[key] = self.counts.get(key, 0) + n


_FAMILIES = {
    "actions": ("arena_engine_actions", "SubmitAction calls by result", "result"),
    "cache": ("arena_engine_cache_lookups", "hot-game cache lookups", "hit"),
    "worlds": ("arena_engine_worlds_calls", "Determinize calls answered", "result"),
    "ended": (
        "arena_engine_games_ended_by_platform",
        "games the platform ended before their rules did (a draw), by reason: decision_limit "
        "and log_limit (its caps), stalled (the watchdog: nobody could move it)",
        "reason",
    ),
    "tables": (
        "arena_engine_table_answers",
        "answers this worker logged, by table: people (a person sits at it) or bots (bot-only); "
        "with people's engines (--role people) the people's tables' answers belong there and "
        "the bot-only ones' on the others",
        "table",
    ),
    "sweep": (
        "arena_engine_sweep_failures",
        "games the deadline sweep failed on (each is tried again later; see the log)",
        "result",
    ),
}


class _Counts(Collector):
    """The labelled counters of `Metrics.counts`, as Prometheus counters."""

    def __init__(self, counts: dict[tuple[str, str], int]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[CounterMetricFamily]:
        """One family per counter, a sample per label value seen."""
        for counter, (name, doc, label) in _FAMILIES.items():
            family = CounterMetricFamily(name, doc, labels=[label])
            for (c, value), n in list(self._counts.items()):
                if c == counter:
                    family.add_metric([value], n)
            yield family
