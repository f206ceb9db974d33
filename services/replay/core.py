"""The replay core: the read side of a store (services/readside) plus the lobby and verify.

`Replay` is a `ReadSide` (every game's feed, grants, pages and live streams of the one envelope,
the public pending decision) with what only the replay server adds: the lobby's list of games
and their summaries (games.py), and `verify`. Transports (HTTP/SSE in http.py, gRPC in
grpc_service.py, the play API's seats) parse a request, call one method and encode what it
returns.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path

from ..errors import checked_game_id
from ..eventlog.catalog import archive_file
from ..eventlog.checks import Divergence, VerifyReport
from ..eventlog.entry import decode_entry
from ..eventlog.records import Header, SeedReveal, decode_payload
from ..eventlog.redis_store import RedisEventStore
from ..eventlog.store import EventStore
from ..readside.access import NotFound, SeatCheck, TablePolicy
from ..readside.clock import Clock
from ..readside.decisions import DecisionSource
from ..readside.feed import GameFeed
from ..readside.reader import Page, ReadSide
from ..rules.api import SPECTATOR
from ..verify import verify, verify_records
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

NOT_FINISHED = "the game has not finished: the seed is not revealed yet"  # verify.py's note
NO_REVEAL = "no seed reveal at the end of the log"  # and what it says of a live log

__all__ = ["GameFilter", "GameSummary", "Page", "Replay"]


def _no_live_ids() -> LiveIds:
    async def ids() -> list[str]:
        return []

    return ids


class Replay(ReadSide):
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
        super().__init__(
            store,
            archive_dir,
            clock=clock,
            policy=policy,
            seat_check=seat_check,
            idle_ms=idle_ms,
            decisions=decisions,
            secret=secret,
        )
        if live_ids is None:
            live_ids = (
                redis_live_ids(store) if isinstance(store, RedisEventStore) else _no_live_ids()
            )
        self.live_ids = live_ids
        self._counts = SpectatorCounts()  # the lobby's entry counts (games.py)
        self.metrics = metrics or Metrics()  # counted by the transports, which know theirs
        self.metrics.watch_feeds(lambda: self.feeds)

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

    async def summary(self, game: str) -> GameSummary:
        """One game's lobby summary."""
        feed = await self.feed(game)
        header = self.header_of(feed)
        last = decode_entry(feed.records[-1])
        reveal = decode_payload(last.payload, SeedReveal) if feed.closed else None
        out = summary_of(header, reveal, await self.spectator_version(game))
        out.archived = not await self.store.head(game)
        return out

    async def verify(self, game: str) -> VerifyReport:
        """Verify the game: chain, seed commitment, a full re-run and the reveal against it
        (in a worker thread). A live game is verified as far as its spectators have been sent
        and reported in their terms (`_as_spectator`): its length, its answers and whatever
        a re-run's failure would say of them are what it keeps secret until it ends."""
        rows = await self.store.read_timed(checked_game_id(game))
        if rows:
            feed = await self.feed(game)
            live = not feed.over
            if live:
                delay = self.spectator_delay_ms(self.header_of(feed))
                rows = rows[: feed.released(delay, self.clock.now_ms())]
            records, times = [d for _, d, _ in rows], [t for *_, t in rows]
            report = await asyncio.to_thread(verify_records, records, None, game, times)
            return _as_spectator(report, feed) if live else report
        path = self._archive_path(game)
        if path is None:
            raise NotFound(f"no game {game!r}")
        return await asyncio.to_thread(verify, path)

    def _archive_path(self, game: str) -> Path | None:
        if self.archive_dir is None:
            return None
        path = archive_file(self.archive_dir, game)
        return path if path.is_file() else None


def _as_spectator(report: VerifyReport, feed: GameFeed) -> VerifyReport:
    """A live game's report as a spectator may read it (issue 40: the raw log length was ahead
    of the delayed spectator, and entries minus public entries counted the hidden prompts):
    numbers are the spectator's positions, and a failure says where and of what kind only (its
    reason and the expected and actual entries can name hidden cards and answers)."""
    at = feed.positions
    d = report.divergence
    if d is not None:  # a live log's own state (no reveal yet) is public; anything else: where
        reason = d.reason if d.reason == NO_REVEAL else "does not verify (details once it ends)"
        d = Divergence(at.position(SPECTATOR, d.entry), d.kind, reason)
    notes = [n for n in report.notes if n == NOT_FINISHED]
    return dataclasses.replace(
        report, entries=at.position(SPECTATOR, report.entries), divergence=d, notes=notes
    )
