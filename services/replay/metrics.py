"""The replay server's Prometheus metrics, on their own registry (tests run several servers in one
process): spectators connected, entries sent, HTTP requests, lobby listings."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from ..readside import entries

TRANSPORTS = ("sse", "grpc")  # of streams
LISTERS = ("http", "grpc")  # of lobby listings
ROUTES = ("viewer", "static", "games", "game", "events", "stream", "verify", "chart", "tv", "other")


class Metrics:
    """Per transport (`sse` or `http`, `grpc`): open streams, entries sent, listings; HTTP
    requests by route and status class."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.spectators = Gauge(
            "arena_replay_spectators",
            "open live-game streams (SSE /api/games/ID/stream, gRPC StreamGame), by transport",
            ["transport"],
            registry=r,
        )
        self.events = Counter(
            "arena_replay_events_sent",
            "log entries sent on streams, by transport",
            ["transport"],
            registry=r,
        )
        self.decisions = Counter(
            "arena_replay_decisions_sent",
            "pending-decision messages sent on SSE streams",
            registry=r,
        )
        self.requests = Counter(
            "arena_replay_http_requests",
            "HTTP requests by route and status class (2xx, 4xx, 5xx)",
            ["route", "status"],
            registry=r,
        )
        self.listings = Counter(
            "arena_replay_listings",
            "lobby listings (GET /api/games, gRPC ListGames), by transport",
            ["transport"],
            registry=r,
        )
        self.listed = Counter(
            "arena_replay_games_listed",
            "game summaries returned by lobby listings, by transport",
            ["transport"],
            registry=r,
        )
        self.feeds = Gauge(
            "arena_replay_feeds", "games held in memory (live tails and recent replays)", registry=r
        )
        self.unreadable = Gauge(
            "arena_replay_entries_unreadable",
            "log entries the read side could not read since the start (sent as kind other; "
            "each kind logged once)",
            registry=r,
        )
        self.unreadable.set_function(lambda: sum(entries.unreadable.values()))
        # the children each place increments, looked up once (labels() costs microseconds)
        self.open = {t: self.spectators.labels(t) for t in TRANSPORTS}
        self.sent = {t: self.events.labels(t) for t in TRANSPORTS}
        self.lists = {t: self.listings.labels(t) for t in LISTERS}
        self.summaries = {t: self.listed.labels(t) for t in LISTERS}
        self._requests: dict[tuple[str, int], Counter] = {}

    def request(self, route: str, status: int) -> None:
        """Count one HTTP request to `route` (one of ROUTES) answered with `status`."""
        cls = status // 100
        child = self._requests.get((route, cls))
        if child is None:
            child = self._requests[(route, cls)] = self.requests.labels(route, f"{cls}xx")
        child.inc()

    def listed_games(self, transport: str, games: int) -> None:
        """Count one lobby listing that returned `games` summaries."""
        self.lists[transport].inc()
        self.summaries[transport].inc(games)

    def watch_feeds(self, count: Callable[[], int]) -> None:
        """Read the `feeds` gauge from `count` at scrape time (nothing to do meanwhile)."""
        self.feeds.set_function(count)

    def watch_seat_decisions(self, counts: Callable[[], dict[str, int]]) -> None:
        """`arena_replay_seat_decisions_total{source}`, read from `counts` at scrape time: how
        the people's seats learned what is pending (services/readside/seats.py)."""
        self.registry.register(_SeatDecisions(counts))


class _SeatDecisions(Collector):
    """What the seats' streams and views were told is pending, by where it came from."""

    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[CounterMetricFamily]:
        """One sample per source."""
        family = CounterMetricFamily(
            "arena_replay_seat_decisions",
            "what is pending, as a person's seat was told it, by source: engine (GetDecision "
            "asked), answer (the engine's reply to the seat's own answer), mark (the engine's "
            "mark beside the log's entries: another seat's move)",
            labels=["source"],
        )
        for source, n in self._counts().items():
            family.add_metric([source], n)
        yield family
