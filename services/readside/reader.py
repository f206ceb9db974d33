"""`ReadSide`: the games of a store as viewers may read them, for every transport of a process.

One `GameFeed` per game (loaded from the live log, else the archive file; tailed while watched),
shared by every viewer; a request is granted (access.py) and then served from the feed: a page
of entries (`get_events`), a live stream of them (`stream`), or a stream with the public pending
decision after each batch (`watch`). A transport parses its request, calls one of these and
encodes what comes back; the entries are already the one envelope (entries.py).

Every number a caller sends or receives (``after``, ``upto``, an entry's ``seq``, a decision's
``version``) is the viewer's own position (positions.py), never the log's seq, which would
count the answers withheld from it. Feeds work in seqs and translate at the edge.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ..contracts import decision_ids
from ..errors import checked_game_id
from ..eventlog import archive
from ..eventlog.catalog import read_archived
from ..eventlog.entry import decode_entry
from ..eventlog.records import Header, decode_payload
from ..eventlog.store import EventStore
from .access import Grant, NotFound, SeatCheck, TablePolicy, authorize, no_seats
from .catalogue import card_table
from .clock import Clock, SystemClock
from .decisions import DecisionSource
from .feed import Cursor, GameFeed, Update
from .tail import Tails, TailsMany

MAX_CLOSED_FEEDS = 64  # finished games kept in memory for replays


@dataclass
class Page:
    """The viewer's entries (envelope JSON) at positions ``after < position <= upto`` it may
    have now, and their positions; ``upto`` is how far it got (its position)."""

    grant: Grant
    entries: list[bytes]
    upto: int
    over: bool
    positions: list[int]


class ReadSide:
    """The games of ``store`` (and of the archive folder), as each viewer may read them."""

    def __init__(
        self,
        store: EventStore,
        archive_dir: Path | None = None,
        *,
        clock: Clock | None = None,
        policy: Callable[[Header], TablePolicy] | None = None,
        seat_check: SeatCheck | None = None,
        idle_ms: int = 60_000,
        decisions: DecisionSource | None = None,
        secret: bytes | None = None,
    ) -> None:
        self.store = store
        self.archive_dir = archive_dir
        self.clock = clock or SystemClock()
        self.policy = policy or (lambda h: TablePolicy())
        # no check given: no token opens a seat's view (a server passes the HMAC check)
        self.seat_check = seat_check or no_seats
        self.idle_ms = idle_ms
        self.decisions = decisions
        # the deployment's secret keys the opaque decision ids a seat's answers carry (the ids
        # the engine shows it); without one they carry none (entries.py)
        self.secret = secret
        self._feeds: dict[str, GameFeed] = {}
        self._loading: dict[str, asyncio.Future[GameFeed]] = {}
        # the feeds wait for new entries together where the store can (tail.py: one Redis)
        together = getattr(store, "tails_together", False)
        self.tails = Tails(cast(TailsMany, store)) if together else None

    @property
    def feeds(self) -> int:
        """How many games' feeds are held."""
        return len(self._feeds)

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
            feed.tail(self.store, self.idle_ms, lambda: None, self.tails)
        return feed

    async def _load(self, game: str) -> GameFeed:
        opaque = None
        if self.secret is not None:
            opaque = functools.partial(
                decision_ids.opaque, decision_ids.game_key(self.secret, game)
            )
        feed = GameFeed(game, self.clock, self.decisions, opaque, self.archive_dir)
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

    def _evict(self) -> None:
        closed = [f for f in self._feeds.values() if f.closed and not f.watchers]
        closed.sort(key=lambda f: f.last_used)
        for f in closed[: max(0, len(closed) - MAX_CLOSED_FEEDS + 1)]:
            del self._feeds[f.game]

    @staticmethod
    def header_of(feed: GameFeed) -> Header:
        """The header (first entry) of a feed's game."""
        return decode_payload(decode_entry(feed.records[0]).payload, Header)

    async def header(self, game: str) -> Header:
        """The game's header (its first entry)."""
        return self.header_of(await self.feed(game))

    async def cards(self, game: str) -> bytes:
        """The game's card table as JSON (catalogue.py)."""
        return card_table(await self.header(game))

    def spectator_delay_ms(self, header: Header) -> int:
        """The table's spectator delay."""
        return self.policy(header).spectator_delay_ms

    async def spectator_version(self, game: str) -> int:
        """How many entries of ``game`` its spectators have been sent (never ahead of the
        table's spectator delay): what a lobby or a game's summary may say of a live game."""
        feed = await self.feed(game)
        delay = self.spectator_delay_ms(self.header_of(feed))
        return feed.spectator_version(delay, self.clock.now_ms())

    async def grant(
        self, game: str, viewer: int, token: str | None = None, delay_ms: int = 0
    ) -> tuple[GameFeed, Grant]:
        """The feed of ``game`` and what ``viewer`` may receive of it; raises Forbidden."""
        feed = await self.feed(game)
        header = self.header_of(feed)
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
    ) -> Page:
        """The viewer's entries of ``game`` after its position ``after`` (up to ``upto``),
        redacted, delay applied."""
        feed, grant = await self.grant(game, viewer, token, delay_ms)
        at = feed.positions
        end = feed.released(grant.delay_ms, self.clock.now_ms())
        if upto is not None and upto > 0:
            end = min(end, at.seq(grant.viewer, upto))
        start = at.seq(grant.viewer, max(0, after))
        got = feed.batch(grant.viewer, start, end)
        upto = at.position(grant.viewer, max(end, start))
        return Page(grant, [e for _, e in got], upto, feed.over, [p for p, _ in got])

    async def stream(
        self,
        game: str,
        viewer: int,
        token: str | None = None,
        after: int = 0,
        delay_ms: int = 0,
    ) -> AsyncGenerator[list[tuple[int, bytes]], None]:
        """Batches of (position, envelope) after the viewer's position ``after``, each released
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
        """``watch`` for a feed and grant already obtained, after the log seq ``after`` (a
        server-side cursor, not a client's position)."""
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
        cur = Cursor(feed, grant, after, decisions)
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
            self.keep_tailing(feed)  # restart if it idled out
            await feed.wait_beyond(cur.after, any_change=cur.show)

    def keep_tailing(self, feed: GameFeed) -> None:
        """Make sure ``feed`` reads on (its tail stops when it sits unwatched)."""
        feed.tail(self.store, self.idle_ms, lambda: None, self.tails)

    async def close(self) -> None:
        """Stop every tail task."""
        for feed in list(self._feeds.values()):
            await feed.stop()
        if self.decisions is not None:
            await self.decisions.close()
