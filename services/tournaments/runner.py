"""Playing a tournament through a running platform: publish its games, record each as it ends.

One loop for every host (the `arena tournament` process, the web server for a tournament made
in the browser): the games missing from the journal are published to the platform's matches
stream (the engine's create is idempotent, so a game published again is a no-op), at most
``concurrency`` in flight; each finished game is read (live log or archive), checked to be the
one the tournament asked for (`check_adoption`) and appended to the journal. A Redis outage is
waited out (one line when it starts, one when it ends); a game whose end was announced while
the loop was not listening is found again after STALL_S.

External entrants (specs.py): a bot account is told where it sits (its inbox, seating.py) when
its game is published; a person is seated by the host (``seat_person``) and plays one game at a
time, so a game waits in the queue while one of its people is still playing another.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

from ..contracts.streams import Seat
from ..eventlog.records import reveal_matches
from ..redisinfra.reconnect import OUTAGE, Outage, is_outage, until_reachable
from ..redisinfra.redis_client import connect
from . import seating
from .journal import read_journal
from .matches import Finished, Games
from .spec import Spec, kind_of
from .standings import Played

STALL_S = 60.0  # no game finished this long: publish the games in flight again
GIVE_UP_S = 600.0

SeatPerson = Callable[[str, str, int], Awaitable[bool]]
"""(person's player id, game, seat) -> whether the person was seated (False: busy elsewhere)."""


def check_adoption(spec: Spec, i: int, got: Finished) -> None:
    """Refuse to record game i unless it is the game this tournament asked for: its header's
    ruleset, players, options and seats (who sits where, bot or not), and a seed reveal that
    opens the header's commitment to seed SEED + i. A game under the same id that somebody else
    created first (ids are predictable) fails here, already-archived ones included."""
    h, r = got.header, got.reveal
    expected = [Seat(s.player, s.bot) for s in spec.seated(i)]
    checks = (
        ("ruleset", h.ruleset, spec.ruleset),
        ("players", h.players, spec.players),
        ("options", dict(h.options), dict(spec.options)),
        ("seats", [Seat(s.player, s.bot) for s in h.seats], expected),
        ("seed", r.seed, spec.seed + i),
        ("seed commitment", reveal_matches(h, r), True),
    )
    for name, have, want in checks:
        if have != want:
            raise RuntimeError(
                f"game {h.game_id} is not this tournament's game {i}: its {name} is {have!r}, "
                f"expected {want!r} (created by someone else under the same id?)"
            )


async def play(
    spec: Spec,
    redis_url: str,
    namespace: str,
    archive_dir: Path,
    todo: list[int],
    journal: Path,
    concurrency: int,
    *,
    names: dict[str, str] | None = None,
    keep_alive: Callable[[], list[str]] | None = None,
    on_record: Callable[[Played], None] | None = None,
    seat_person: SeatPerson | None = None,
    stop: asyncio.Event | None = None,
    say: Callable[[str], None] | None = None,
    client: Any = None,
    give_up_s: float | None = None,
) -> int:
    """Publish games ``todo`` of ``spec`` and append each finished one to ``journal``; how
    many were recorded. Ends when all are, or when ``stop`` is set (the games in flight play on
    and are recorded by the next run). ``client``: a Redis client to use (else one is made for
    ``redis_url`` and closed at the end). ``give_up_s``: a Redis outage (away, BUSY, LOADING,
    refusing writes) longer than this ends the run with RedisGone (a tool's choice: a server
    hosting the loop waits, None)."""
    own = client is None
    client = connect(redis_url) if own else client
    try:
        loop = _Loop(spec, client, namespace, archive_dir, todo, journal, concurrency)
        loop.names, loop.seat_person, loop.on_record = names or {}, seat_person, on_record
        loop.give_up_s = give_up_s
        return await loop.run(keep_alive, stop, say)
    finally:
        if own:
            await client.aclose()


class _Loop:
    """One run of the tournament loop (see `play`)."""

    def __init__(
        self,
        spec: Spec,
        client: Any,
        namespace: str,
        archive_dir: Path,
        todo: list[int],
        journal: Path,
        concurrency: int,
    ) -> None:
        self.spec = spec
        self.client = client
        self.ns = namespace
        self.archive_dir = archive_dir
        self.games = Games(client, namespace, archive_dir)
        self.journal = journal
        self.concurrency = max(1, concurrency)
        self.queue = list(todo)
        self.by_id = {spec.game_id(i): i for i in todo}
        self.inflight: set[str] = set()
        self.ended: set[str] = set()  # announced finished, result not read yet (Redis away?)
        self.busy: dict[str, str] = {}  # person -> the game they play now
        self.names: dict[str, str] = {}
        self.seat_person: SeatPerson | None = None
        self.on_record: Callable[[Played], None] | None = None
        self.played = 0
        self.last = time.monotonic()
        self.give_up_s: float | None = None
        self.stalled: dict[str, int] = {}  # game -> the log version it was said stalled at

    async def run(
        self,
        keep_alive: Callable[[], list[str]] | None,
        stop: asyncio.Event | None,
        say: Callable[[str], None] | None,
    ) -> int:
        outage = Outage("arena tournament", give_up_s=self.give_up_s)
        await until_reachable(self.client, "arena tournament", give_up_s=self.give_up_s)
        await self.games.mark()
        nudged = time.monotonic()
        with self.journal.open("ab") as jf:
            self.jf = jf
            while (self.queue or self.inflight) and not (stop is not None and stop.is_set()):
                for line in keep_alive() if keep_alive is not None else []:
                    if say is not None:
                        say(line)
                try:
                    await self.step()
                except Exception as exc:
                    if not is_outage(exc):
                        raise
                    await outage.failed(exc)
                    continue
                outage.ok()
                idle = time.monotonic() - self.last
                if self.inflight and idle > GIVE_UP_S:
                    stalled = sorted(self.stalled) or sorted(self.inflight)
                    raise RuntimeError(
                        f"no game finished in {GIVE_UP_S:.0f} s; is a bot worker running? "
                        f"(not moving: {', '.join(stalled[:5])})"
                    )
                if self.inflight and idle > STALL_S and time.monotonic() - nudged > STALL_S:
                    nudged = time.monotonic()
                    await self.nudge()
                    for line in await self.stalled_games():
                        if say is not None:
                            say(line)
        return self.played

    def record(self, i: int, got: Finished) -> None:
        """Append game i's result to the journal."""
        res = got.result
        p = Played(
            i=i,
            game=res.game_id,
            seed=self.spec.seed + i,
            seats=self.spec.seats(i),
            ruleset=self.spec.ruleset,
            roles=list(res.roles),
            winners=list(res.winners),
            draw=res.draw,
        )
        self.jf.write(msgspec.json.encode(p) + b"\n")
        self.jf.flush()
        self.played += 1
        self.last = time.monotonic()
        for person, game in list(self.busy.items()):
            if game == res.game_id:
                del self.busy[person]
        if self.on_record is not None:
            self.on_record(p)

    def _ready(self, i: int) -> bool:
        """Whether none of game i's people is playing another game of this tournament."""
        return not any(kind_of(e) == "person" and e in self.busy for e in self.spec.seats(i))

    async def publish(self, i: int) -> bool:
        """Seat game i's people and publish it, then tell its bots; False if a person is busy
        elsewhere (the game waits)."""
        gid = self.spec.game_id(i)
        seats = self.spec.seats(i)
        for seat, e in enumerate(seats):
            if kind_of(e) == "person":
                if self.seat_person is None:
                    raise RuntimeError("this host cannot seat people (only the web server can)")
                if not await self.seat_person(e, gid, seat):
                    return False
                self.busy[e] = gid
        await self.games.publish(self.spec.match(i, self.names))
        for seat, e in enumerate(seats):
            if kind_of(e) == "bot":
                await seating.announce(self.client, self.ns, e, gid, seat)
        return True

    async def step(self) -> None:
        """Publish what may start, then record what finished."""
        for i in list(self.queue):
            if len(self.inflight) >= self.concurrency:
                break
            if not self._ready(i):
                continue
            gid = self.spec.game_id(i)
            done = None
            if (self.archive_dir / f"{gid}.arena").exists():
                done = await self.games.result(gid, tries=1)
            if done is None and not await self.publish(i):
                continue
            self.queue.remove(i)  # only once published (or found finished)
            if done is not None:  # finished while nobody listened: if it is ours
                check_adoption(self.spec, i, done)
                self.record(i, done)
                continue
            self.inflight.add(gid)
        fresh = [g for g in await self.games.finished(block_ms=500) if g in self.inflight]
        for gid in dict.fromkeys(fresh + sorted(self.ended)):
            if gid not in self.inflight:
                continue
            # just announced: its log may be being archived, so a few tries
            got = await self.games.result(gid, tries=1 if gid in self.ended else 20)
            if got is None:
                self.ended.add(gid)  # not readable now (Redis away?): again next round
                continue
            check_adoption(self.spec, self.by_id[gid], got)
            self.ended.discard(gid)
            self.inflight.discard(gid)
            self.record(self.by_id[gid], got)

    async def nudge(self) -> None:
        """Nothing finished for a while: read the ends we may have missed, and publish the
        games in flight again (idempotent: makes sure each one is moving)."""
        for gid in sorted(self.inflight):
            got = await self.games.result(gid, tries=1)
            if got is not None:
                check_adoption(self.spec, self.by_id[gid], got)
                self.inflight.discard(gid)
                self.record(self.by_id[gid], got)
        for gid in self.inflight:
            with contextlib.suppress(*OUTAGE):
                await self.games.publish(self.spec.match(self.by_id[gid], self.names))

    async def stalled_games(self) -> list[str]:
        """The games in flight whose logs have not moved for STALL_S, each said once per stall
        by id (one that does not move is the engines' watchdog's: read again and, if it still
        does not move, ended as abandoned; a runaway is ended at the engines' caps)."""
        lines = []
        for gid in sorted(self.inflight):
            version = await self.games.store.head(gid)
            rows = await self.games.store.read_timed(gid, version - 1, version) if version else []
            at = rows[0][2] if rows else None
            quiet = None if at is None else time.time() - at / 1000
            if quiet is None or quiet < STALL_S:
                self.stalled.pop(gid, None)
                continue
            if self.stalled.get(gid) != version:
                self.stalled[gid] = version
                lines.append(
                    f"game {gid} has not moved for {quiet:.0f} s (its log at entry {version}); "
                    "the engines' watchdog recovers it or ends it as abandoned"
                )
        return lines


def todo_of(spec: Spec, journal: Path) -> tuple[dict[int, Played], list[int]]:
    """(the games the journal holds, the numbers still to play)."""
    done = read_journal(journal)
    return done, [i for i in range(spec.games) if i not in done]
