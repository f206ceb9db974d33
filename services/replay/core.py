"""The replay core: list, get, read, watch and verify games, as plain async methods.

Transports (HTTP/SSE in http.py, gRPC in grpc_service.py) parse a request, call one method here
and encode what it returns. Every entry a caller receives passes through ``GameFeed.envelope``,
which redacts events with ``services.rules`` views.redact for the granted viewer.

Every number a caller sends or receives (``after``, ``upto``, an entry's ``seq``, a decision's
``version``) is the viewer's own position (eventlog/positions.py: 1, 2, 3, … over the entries
it receives), never the log's seq, which would count the answers withheld from it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path

from ..contracts import decision_ids
from ..errors import checked_game_id
from ..eventlog import archive
from ..eventlog.catalog import archive_file, archived_after, read_archived
from ..eventlog.entry import decode_entry
from ..eventlog.records import Header, SeedReveal, decode_payload
from ..eventlog.redis_store import RedisEventStore
from ..eventlog.store import EventStore, TimedRecord
from ..eventlog.verify import VerifyReport, verify, verify_records
from ..readside.clock import Clock, SystemClock
from .access import Grant, NotFound, SeatCheck, TablePolicy, authorize, no_seats
from .decisions import DecisionSource
from .envelope import card_table
from .feed import GameFeed
from .games import (
    GameFilter,
    GameSummary,
    LiveIds,
    SpectatorCounts,
    list_games,
    redis_live_ids,
    summary_of,
)
from .metrics import Metrics

__all__ = ["Cursor", "EventsPage", "GameFilter", "GameSummary", "Replay", "Update"]
MAX_CLOSED_FEEDS = 64  # finished games kept in memory for replays


@dataclass
class EventsPage:
    """The viewer's entries at positions ``after < position <= upto`` it may have; ``upto`` is
    how far it got (its position)."""

    grant: Grant
    entries: list[bytes]
    upto: int
    over: bool


Update = tuple[list[tuple[int, bytes]], bytes | None]


class Cursor:
    """How far one stream of a feed has got: the entries sent (up to ``after``) and the public
    decision last sent (``sent``). One cursor may serve one viewer or, in the SSE fan-out
    (fanout.py), every viewer of the same grant at once: what it yields depends on the grant
    alone, never on who receives it."""

    def __init__(self, feed: GameFeed, grant: Grant, after: int, show: bool) -> None:
        self.feed = feed
        self.grant = grant
        self.after = after
        self.show = show and feed.decisions is not None
        self.sent: bytes | None = None

    def take(self, now_ms: int) -> Update | None:
        """What to send now: the entries released since ``after`` (redacted for the grant's
        viewer) and the public pending decision if it changed; None if nothing."""
        feed, after, viewer = self.feed, self.after, self.grant.viewer
        end = feed.released(self.grant.delay_ms, now_ms)
        batch: list[tuple[int, bytes]] = []
        if end > after:  # `after` is a log seq; what goes out carries the viewer's positions
            at = feed.positions
            batch = [
                (at.position(viewer, s), e)
                for s in range(after + 1, end + 1)
                if (e := feed.envelope(s, viewer)) is not None
            ]
            self.after = after = end
        if batch:
            self.sent = None  # a viewer drops the decision it shows when entries arrive
        decision = feed.decision_for(after, viewer) if self.show else None
        clear = b'{"version":%d}' % feed.positions.position(viewer, after)
        if decision is None and self.sent is not None and self.sent != clear:
            # what the viewer shows was answered by an answer alone (withheld from it): tell
            # it, so it does not keep showing a stale decision
            decision = clear
        if decision == self.sent:
            decision = None
        elif decision is not None:
            self.sent = decision
        return (batch, decision) if batch or decision is not None else None

    @property
    def finished(self) -> bool:
        """The log is complete and every entry of it was taken."""
        return self.feed.closed and self.after >= self.feed.version


"""What a watcher receives at once: entries (its position, entry JSON), then the public pending
decision JSON if one is (newly) known for the last entry it has (see decisions.py)."""


def _no_live_ids() -> LiveIds:
    async def ids() -> list[str]:
        return []

    return ids


class Replay:
    """Replay and spectating over a live store and an archive folder."""

    def __init__(
        self,
        store: EventStore,
        archive_dir: Path | None = None,
        *,
        clock: Clock | None = None,
        policy: Callable[[Header], TablePolicy] | None = None,
        seat_check: SeatCheck | None = None,
        live_ids: LiveIds | None = None,
        idle_ms: int = 60_000,
        decisions: DecisionSource | None = None,
        metrics: Metrics | None = None,
        secret: bytes | None = None,
    ) -> None:
        self.store = store
        # the deployment's secret keys the opaque decision ids a seat's answers carry (the ids
        # the engine shows it); without one they carry none (envelope.py)
        self.secret = secret
        self.archive_dir = archive_dir
        self.clock = clock or SystemClock()
        self.policy = policy or (lambda h: TablePolicy())
        # no check given: no token opens a seat's view (the server passes the HMAC check)
        self.seat_check = seat_check or no_seats
        if live_ids is None:
            live_ids = (
                redis_live_ids(store) if isinstance(store, RedisEventStore) else _no_live_ids()
            )
        self.live_ids = live_ids
        self.idle_ms = idle_ms
        self.decisions = decisions
        self._feeds: dict[str, GameFeed] = {}
        self._counts = SpectatorCounts()  # the lobby's entry counts (games.py)
        self._loading: dict[str, asyncio.Future[GameFeed]] = {}
        self.metrics = metrics or Metrics()  # counted by the transports, which know theirs
        self.metrics.watch_feeds(lambda: len(self._feeds))

    async def list_games(self, f: GameFilter | None = None) -> list[GameSummary]:
        """Live and archived games, newest first; a live game's `version` counts what its
        spectators have been sent (held the table's spectator delay behind)."""
        return await list_games(
            self.store,
            self.live_ids,
            self.archive_dir,
            f or GameFilter(),
            self._counts,
            self.spectator_delay_ms,
            self.clock.now_ms(),
        )

    def spectator_delay_ms(self, header: Header) -> int:
        """The table's spectator delay."""
        return self.policy(header).spectator_delay_ms

    async def spectator_version(self, game: str) -> int:
        """How many entries of ``game`` its spectators have been sent: the version the lobby
        and the game's summary show (never ahead of the table's spectator delay)."""
        feed = await self.feed(game)
        header = decode_payload(decode_entry(feed.records[0]).payload, Header)
        return feed.spectator_version(self.spectator_delay_ms(header), self.clock.now_ms())

    async def summary(self, game: str) -> GameSummary:
        """One game's lobby summary."""
        feed = await self.feed(game)
        header = decode_payload(decode_entry(feed.records[0]).payload, Header)
        last = decode_entry(feed.records[-1])
        reveal = decode_payload(last.payload, SeedReveal) if feed.closed else None
        out = summary_of(header, reveal, await self.spectator_version(game))
        out.archived = not await self.store.head(game)
        return out

    async def header(self, game: str) -> Header:
        """The game's header (its first entry)."""
        feed = await self.feed(game)
        return decode_payload(decode_entry(feed.records[0]).payload, Header)

    async def cards(self, game: str) -> bytes:
        """The game's card table as JSON (see envelope.card_table)."""
        return card_table(await self.header(game))

    async def grant(
        self, game: str, viewer: int, token: str | None = None, delay_ms: int = 0
    ) -> tuple[GameFeed, Grant]:
        """The feed of ``game`` and what ``viewer`` may receive of it; raises Forbidden."""
        feed = await self.feed(game)
        header = decode_payload(decode_entry(feed.records[0]).payload, Header)
        grant = authorize(
            game,
            self.policy(header),
            feed.over,
            header.players,
            viewer,
            token,
            delay_ms,
            self.seat_check,
        )
        return feed, grant

    async def get_events(
        self,
        game: str,
        viewer: int,
        token: str | None = None,
        after: int = 0,
        upto: int | None = None,
        delay_ms: int = 0,
    ) -> EventsPage:
        """The viewer's entries of ``game`` after its position ``after`` (up to ``upto``),
        redacted, delay applied."""
        feed, grant = await self.grant(game, viewer, token, delay_ms)
        at = feed.positions
        end = feed.released(grant.delay_ms, self.clock.now_ms())
        if upto is not None and upto > 0:
            end = min(end, at.seq(grant.viewer, upto))
        start = at.seq(grant.viewer, max(0, after))
        out = [e for seq in range(start + 1, end + 1) if (e := feed.envelope(seq, grant.viewer))]
        return EventsPage(grant, out, at.position(grant.viewer, max(end, start)), feed.over)

    async def stream(
        self,
        game: str,
        viewer: int,
        token: str | None = None,
        after: int = 0,
        delay_ms: int = 0,
    ) -> AsyncGenerator[list[tuple[int, bytes]], None]:
        """Batches of (position, entry JSON) after the viewer's position ``after``, each released
        no earlier than the grant's delay after its append; ends after the log's last entry."""
        feed, grant = await self.grant(game, viewer, token, delay_ms)
        start = feed.positions.seq(grant.viewer, max(0, after))
        return self._entries(self._watch(feed, grant, start, decisions=False))

    async def watch(
        self,
        game: str,
        viewer: int,
        token: str | None = None,
        after: int = 0,
        delay_ms: int = 0,
    ) -> AsyncGenerator[Update, None]:
        """Like ``stream``, and after each batch the public pending decision (decisions.py):
        only for a viewer with no delay, and only if it belongs to the last entry it has; once
        one was sent, ``{"version": V}`` (no seat) says nothing public is pending after V."""
        feed, grant = await self.grant(game, viewer, token, delay_ms)
        start = feed.positions.seq(grant.viewer, max(0, after))
        return self._watch(feed, grant, start, decisions=True)

    def stream_feed(self, feed: GameFeed, grant: Grant, after: int) -> AsyncGenerator[Update, None]:
        """``watch`` for a feed and grant already obtained (``grant``), after the log seq
        ``after`` (a server-side cursor, not a client's position)."""
        return self._watch(feed, grant, max(0, after), decisions=True)

    @staticmethod
    async def _entries(
        updates: AsyncGenerator[Update, None],
    ) -> AsyncGenerator[list[tuple[int, bytes]], None]:
        try:
            async for batch, _ in updates:
                yield batch
        finally:
            await updates.aclose()

    async def _watch(
        self, feed: GameFeed, grant: Grant, after: int, decisions: bool
    ) -> AsyncGenerator[Update, None]:
        # `after` is a log seq here (Cursor numbers what goes out by the viewer's positions);
        # a delayed viewer gets no decision: it is live, and would run ahead of the events
        cur = Cursor(feed, grant, after, decisions and grant.delay_ms <= 0)
        feed.watchers += 1
        try:
            while True:
                update = cur.take(self.clock.now_ms())
                if update is not None:
                    yield update
                elif cur.finished:
                    return
                else:
                    await self.wait(cur)
        finally:
            feed.watchers -= 1
            feed.last_used = self.clock.now_ms()

    async def wait(self, cur: Cursor) -> None:
        """Until ``cur`` may have something to take: an entry released, or (when it shows
        decisions) any change of the feed."""
        feed = cur.feed
        if feed.version > cur.after:  # held back by the delay
            await self.clock.sleep_until(feed.at_ms[cur.after] + cur.grant.delay_ms)
        else:
            feed.tail(self.store, self.idle_ms, lambda: None)  # restart if it idled out
            await feed.wait_beyond(cur.after, any_change=cur.show)

    async def verify(self, game: str) -> VerifyReport:
        """Verify the game: chain, seed commitment, a full re-run and the reveal against it
        (in a worker thread)."""
        rows = await self.store.read_timed(checked_game_id(game))
        if rows:
            records, times = [d for _, d, _ in rows], [t for *_, t in rows]
            return await asyncio.to_thread(verify_records, records, None, game, times)
        path = self._archive_path(game)
        if path is None:
            raise NotFound(f"no game {game!r}")
        return await asyncio.to_thread(verify, path)

    def _archive_path(self, game: str) -> Path | None:
        if self.archive_dir is None:
            return None
        path = archive_file(self.archive_dir, game)
        return path if path.is_file() else None

    async def feed(self, game: str) -> GameFeed:
        """The (shared) feed of ``game``, loaded on first use; raises NotFound, BadRequest."""
        checked_game_id(game)
        feed = self._feeds.get(game)
        if feed is None:
            loading = self._loading.get(game)
            if loading is None:
                loading = self._loading[game] = asyncio.ensure_future(self._load(game))
                loading.add_done_callback(lambda _: self._loading.pop(game, None))
            feed = await asyncio.shield(loading)
        feed.last_used = self.clock.now_ms()
        if not feed.closed:
            feed.tail(self.store, self.idle_ms, lambda: None)
        return feed

    async def _load(self, game: str) -> GameFeed:
        opaque = None
        if self.secret is not None:
            opaque = functools.partial(
                decision_ids.opaque, decision_ids.game_key(self.secret, game)
            )
        feed = GameFeed(game, self.clock, self.decisions, opaque, self._archived)
        records = await self.store.read_timed(game)
        if records:
            feed.add(records, self.clock.now_ms())
        else:
            try:
                stored = await read_archived(self.archive_dir, game) if self.archive_dir else None
            except archive.ArchiveDamaged as exc:
                raise NotFound(f"game {game!r}: archive damaged ({exc})") from None
            if stored is None:
                raise NotFound(f"no game {game!r}")
            if not stored:
                raise NotFound(f"game {game!r}: archive damaged (no entries)")
            feed.add([(seq, data, 0) for seq, data in enumerate(stored, 1)], 0)
        self._evict()
        self._feeds[game] = feed
        return feed

    async def _archived(self, game: str, after: int) -> list[TimedRecord]:
        """The entries of ``game`` after ``after`` from its archive file, for a feed whose live
        log was dropped before it read the end (catalog.archived_after)."""
        return [
            (seq, data, None) for seq, data in await archived_after(self.archive_dir, game, after)
        ]

    def _evict(self) -> None:
        closed = [f for f in self._feeds.values() if f.closed and not f.watchers]
        closed.sort(key=lambda f: f.last_used)
        for f in closed[: max(0, len(closed) - MAX_CLOSED_FEEDS + 1)]:
            del self._feeds[f.game]

    async def close(self) -> None:
        """Stop every tail task."""
        for feed in list(self._feeds.values()):
            await feed.stop()
        if self.decisions is not None:
            await self.decisions.close()
