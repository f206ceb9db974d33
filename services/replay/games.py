"""The lobby's list of games: live ones from Redis, finished ones from the archive catalog."""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ..eventlog.catalog import CatalogRecord, load_catalog
from ..eventlog.entry import HEADER, SEED_REVEAL, decode_entry, upgrade
from ..eventlog.records import Header, SeedReveal, decode_payload
from ..eventlog.redis_store import RedisEventStore
from ..eventlog.store import EventStore
from ..readside.positions import Positions, answer_seat
from ..rules.api import SPECTATOR

LiveIds = Callable[[], Awaitable[list[str]]]
"""Lists the games that have a log in the live store."""
DelayOf = Callable[[Header], int]
"""The spectator delay of a game's table (ms), from its header."""


class GameSummary(msgspec.Struct, kw_only=True):
    """One game as the lobby lists it (times in ms since the epoch; ``end`` 0 while live)."""

    id: str
    ruleset: str
    players: list[str]
    bots: list[bool]
    start: int
    end: int = 0
    winners: list[int] = msgspec.field(default_factory=list)
    names: list[str] = msgspec.field(default_factory=list)  # chosen names ("" = the id)
    sides: list[str] = msgspec.field(default_factory=list)  # the winning roles
    rules_version: str = ""
    finished: bool = False
    archived: bool = False
    # how many entries a spectator of the game has been sent (its position: answers are not
    # counted, and a live game's count stops at the table's spectator delay)
    version: int = 0


@dataclass(frozen=True)
class GameFilter:
    """ListGames filters; empty or None means any. ``status`` is ``live`` or ``finished``."""

    ruleset: str = ""
    player: str = ""
    status: str = ""
    since_ms: int = 0
    until_ms: int = 0
    limit: int = 100

    def admits(self, g: GameSummary) -> bool:
        """Whether ``g`` passes every filter."""
        return (
            (not self.ruleset or g.ruleset == self.ruleset)
            and (not self.player or self.player in g.players)
            and (not self.status or (self.status == "finished") == g.finished)
            and (not self.since_ms or g.start >= self.since_ms)
            and (not self.until_ms or g.start < self.until_ms)
        )


def redis_live_ids(store: RedisEventStore) -> LiveIds:
    """LiveIds by SCAN over the store's ``NS:{TAG}:g:GAME:log`` keys (services/contracts/streams.py;
    on a cluster redis-py scans every master)."""
    pattern = f"{store.namespace}:{{*}}:g:*:log"

    async def ids() -> list[str]:
        out = []
        async for key in store.client.scan_iter(match=pattern, count=1000):
            k = key.decode() if isinstance(key, bytes) else str(key)
            out.append(k[k.index("}:g:") + 4 : -len(":log")])
        return out

    return ids


def summary_of(header: Header, reveal: SeedReveal | None, version: int) -> GameSummary:
    """A live game's summary from its header and, once it has finished, its seed reveal."""
    return GameSummary(
        id=header.game_id,
        ruleset=header.ruleset,
        players=[s.player for s in header.seats],
        bots=[s.bot for s in header.seats],
        start=header.started_at_ms,
        end=reveal.ended_at_ms if reveal else 0,
        winners=list(reveal.winners) if reveal else [],
        names=[s.name for s in header.seats],
        sides=list(reveal.sides) if reveal else [],
        rules_version=header.rules_version,
        finished=reveal is not None,
        version=version,
    )


def archived_summary(r: CatalogRecord) -> GameSummary:
    """An archived game's summary from its catalog record."""
    return GameSummary(
        id=r.id,
        ruleset=r.ruleset,
        players=list(r.players),
        bots=list(r.bots),
        start=r.start,
        end=r.end,
        winners=list(r.winners),
        names=list(r.names),
        sides=list(r.sides),
        rules_version=r.rules_version,
        finished=True,
        archived=True,
    )


class SpectatorCounts:
    """What a spectator of each live game has been released so far, for the lobby: append times
    and answer positions of every entry read, kept per game and extended by reading only the
    entries appended since the last listing (a listing must not read every log whole)."""

    def __init__(self) -> None:
        self._games: dict[str, tuple[list[int], Positions]] = {}

    async def position(
        self, store: EventStore, game: str, head: int, delay_ms: int, now_ms: int
    ) -> int:
        """The spectator's position in ``game`` (entries 1..``head`` in the log) at ``now_ms``
        for a table ``delay_ms`` behind (0: the whole of 1..head)."""
        at, pos = self._games.setdefault(game, ([], Positions()))
        if pos.head < head:
            for seq, data, t in await store.read_timed(game, pos.head, head):
                if seq == pos.head + 1:
                    pos.add(seq, answer_seat(decode_entry(data)))
                    when = now_ms if t is None else t  # no time: never before it was seen
                    at.append(max(when, at[-1]) if at else when)
        upto = min(head, pos.head)
        if delay_ms > 0:
            upto = min(upto, bisect.bisect_right(at, now_ms - delay_ms))
        return pos.position(SPECTATOR, upto)

    def keep(self, games: set[str]) -> None:
        """Forget the games not in ``games`` (gone from the live store)."""
        for g in [g for g in self._games if g not in games]:
            del self._games[g]


async def live_summary(
    store: EventStore,
    game: str,
    counts: SpectatorCounts | None = None,
    delay_of: DelayOf | None = None,
    now_ms: int = 0,
) -> GameSummary | None:
    """Summary of a game in the live store (None if it has vanished or has no header yet). Its
    `version` is what a spectator has been sent: with ``counts``, held the table's delay
    (``delay_of``) behind while the game is live, so the lobby never runs ahead of the table."""
    first = await store.read(game, 0, 1)
    if not first:
        return None
    head = upgrade(decode_entry(first[0][1]))
    if head.kind != HEADER:
        return None
    version = await store.head(game)
    tail = await store.read(game, version - 1, version)
    if not tail:  # archived and deleted between the two reads
        return None
    last = upgrade(decode_entry(tail[-1][1]))
    reveal = decode_payload(last.payload, SeedReveal) if last.kind == SEED_REVEAL else None
    header = decode_payload(head.payload, Header)
    if counts is not None:
        delay = 0 if reveal is not None or delay_of is None else delay_of(header)
        version = await counts.position(store, game, version, delay, now_ms)
    return summary_of(header, reveal, version)


async def list_games(
    store: EventStore,
    live_ids: LiveIds,
    folder: Path | None,
    f: GameFilter,
    counts: SpectatorCounts | None = None,
    delay_of: DelayOf | None = None,
    now_ms: int = 0,
) -> list[GameSummary]:
    """Live and archived games passing ``f``, newest first (live games' `version` as
    `live_summary` counts it)."""
    ids = await live_ids()
    if counts is not None:
        counts.keep(set(ids))
    summaries = await asyncio.gather(
        *(live_summary(store, g, counts, delay_of, now_ms) for g in ids)
    )
    live = [s for s in summaries if s]
    seen = {s.id for s in live}
    archived: list[GameSummary] = []
    if folder is not None and folder.is_dir():
        catalog = await asyncio.to_thread(load_catalog, folder)
        archived = [archived_summary(r) for r in catalog if r.id not in seen]
    games = [g for g in live + archived if f.admits(g)]
    games.sort(key=lambda g: (g.start, g.id), reverse=True)
    return games[: max(0, f.limit)] if f.limit else games
