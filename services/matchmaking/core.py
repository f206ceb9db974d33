"""The matchmaker: tickets in Redis, tables formed atomically, matches published once.

Redis layout (hash tag `{mm}`; see scripts.py for the transitions):
- `{ns}:{mm}:t:TICKET` — hash: player, name, mode, rating, enq, exp, state (queued, matched,
  cancelled, expired), done, and when matched: game, seat, token. Kept a while after it ends
  (`gc_ms`). `mode` is a mode id or an open table's id (tables.py).
- `{ns}:{mm}:p:PLAYER` — the player's live ticket: at most one.
- `{ns}:{mm}:q:MODE` / `{ns}:{mm}:w:MODE` — the mode's queued tickets by rating / by enqueue time.
- `{ns}:{mm}:exp` — queued tickets (`MODE|TICKET`) by expiry time; WatchTicket pushes it back.
- channel `{ns}:{mm}:updates` — ticket ids whose state changed, so watchers need not poll.

Every time comes from the injected clock, including expiry: Redis key expiry only collects
garbage long after a ticket ended, so tests can move time without sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from ..contracts import tokens
from ..contracts.streams import (
    FIELD,
    MATCHES,
    MATCHMAKER_TAG,
    NewMatch,
    Seat,
    encode,
    partition_key,
)
from ..errors import Refused as Refused  # re-exported: refusals map to statuses there
from . import scripts
from .clock import Clock
from .matcher import Table, Waiting, form_tables
from .metrics import Metrics
from .modes import Mode, UnknownMode, mode_id, resolve
from .rating_store import RatingStore
from .ratings import PRIOR
from .tables import TABLE_ID, Tables, TableSettings, check_name

PLAYER_ID = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
TICKET_ID = re.compile(r"^[0-9a-f]{32}$")
TERMINAL = frozenset({"matched", "cancelled", "expired"})
BOT_PREFIX = "bot:"


@dataclass(frozen=True)
class TicketInfo:
    """A ticket as stored."""

    ticket: str
    player: str
    mode: str
    state: str
    rating: float
    enqueued_ms: int
    expires_ms: int
    done_ms: int = 0
    game: str = ""
    seat: int = -1
    token: str = ""
    name: str = ""


@dataclass(frozen=True)
class Formed:
    """A table that was formed and published: its game, seats, and which ticket got which seat."""

    game: str
    mode: str
    seats: list[Seat]
    tickets: dict[str, int]
    stream_id: str


def _s(v: Any) -> str:
    return "" if v is None else v.decode()


class Matchmaker:
    """Enqueue, watch, cancel and match tickets; any number of processes may share a Redis."""

    def __init__(
        self,
        client: aioredis.Redis,
        modes: Mapping[str, Mode],
        secret: bytes,
        clock: Clock,
        *,
        ratings: RatingStore | None = None,
        namespace: str = "arena",
        ticket_ttl_ms: int = 30_000,
        token_ttl_ms: int = 24 * 3600 * 1000,
        time_limit_ms: int = 0,
        rng: random.Random | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.client = client
        self.metrics = metrics or Metrics()
        self.modes = dict(modes)
        self.secret = secret
        self.clock = clock
        self.ratings = ratings
        self.ticket_ttl_ms = ticket_ttl_ms
        self.token_ttl_ms = token_ttl_ms
        self.time_limit_ms = time_limit_ms
        self.gc_ms = max(10 * ticket_ttl_ms, 3600_000)
        self.rng = rng or random.SystemRandom()
        self.prefix = partition_key(namespace, MATCHMAKER_TAG, "").rstrip(":")
        self.matches = partition_key(namespace, MATCHMAKER_TAG, MATCHES.name)  # in FORM's slot
        self.channel = f"{self.prefix}:updates"
        self.expiry = f"{self.prefix}:exp"
        self._enqueue = client.register_script(scripts.ENQUEUE)
        self._refresh = client.register_script(scripts.REFRESH)
        self._retire = client.register_script(scripts.RETIRE)
        self._form = client.register_script(scripts.FORM)
        self.tables = Tables(self)
        self._quiet = False  # the last tick found nobody queued and no table open
        self.queued = asyncio.Event()  # set by each ticket enqueued here (`quiet_wait`)

    # ---- keys ---------------------------------------------------------------------------------
    def _t(self, ticket: str) -> str:
        return f"{self.prefix}:t:{ticket}"

    def _p(self, player: str) -> str:
        return f"{self.prefix}:p:{player}"

    def _q(self, mode: str) -> str:
        return f"{self.prefix}:q:{mode}"

    def _w(self, mode: str) -> str:
        return f"{self.prefix}:w:{mode}"

    # ---- requests -----------------------------------------------------------------------------
    def mode(self, mode: str, players: int = 0) -> Mode:
        """The mode a request names; INVALID_ARGUMENT if none."""
        try:
            return resolve(self.modes, mode, players)
        except UnknownMode as exc:
            raise Refused("INVALID_ARGUMENT", str(exc)) from None

    async def players_of(self, mode: str) -> int:
        """The table size of a mode id or an open table's id (0 if unknown)."""
        if mode in self.modes:
            return self.modes[mode].players
        found = await self.tables.get(mode)
        return found[0].players if found else 0

    async def enqueue(
        self, player: str, mode: str, players: int = 0, name: str = "", table: str = ""
    ) -> TicketInfo:
        """A new ticket for `player` in a mode's queue, or at an open `table`; ALREADY_EXISTS
        while the player has a live one. `name` is shown at the table (default: the id)."""
        if not PLAYER_ID.match(player):
            raise Refused("INVALID_ARGUMENT", "player ids are 1-64 of A-Z a-z 0-9 _ . @ -")
        try:
            name = check_name(name or player)
        except ValueError as exc:
            raise Refused("INVALID_ARGUMENT", str(exc)) from None
        if table:
            try:
                m = await self.tables.open_mode(table)
            except LookupError as exc:
                raise Refused("NOT_FOUND", str(exc)) from None
            except ValueError as exc:
                raise Refused("FAILED_PRECONDITION", str(exc)) from None
        else:
            m = self.mode(mode, players)
        rating = PRIOR
        if self.ratings is not None and not table:
            rating = await self.ratings.get(m.id, player) or PRIOR
        ticket, now = uuid.uuid4().hex, self.clock.now_ms()
        exp = now + self.ticket_ttl_ms
        ok, tid = await self._enqueue(
            keys=[self._p(player), self._t(ticket), self._q(m.id), self._w(m.id), self.expiry],
            args=[
                ticket,
                player,
                m.id,
                repr(rating.mu),
                now,
                exp,
                self.gc_ms,
                f"{m.id}|{ticket}",
                name,
            ],
        )
        if not ok:
            raise Refused(
                "ALREADY_EXISTS", f"player {player!r} already has a live ticket {_s(tid)}"
            )
        self.metrics.count("enqueued", _label(m.id))
        self.queued.set()
        return TicketInfo(ticket, player, m.id, "queued", rating.mu, now, exp, name=name)

    async def create_table(self, player: str, name: str, settings: TableSettings) -> TicketInfo:
        """Open a table with `settings` and seat its creator (the ticket returned)."""
        try:
            settings = settings.checked()
            check_name(name or player)
        except ValueError as exc:
            raise Refused("INVALID_ARGUMENT", str(exc)) from None
        if not PLAYER_ID.match(player):
            raise Refused("INVALID_ARGUMENT", "player ids are 1-64 of A-Z a-z 0-9 _ . @ -")
        table = await self.tables.create(player, settings)
        try:
            return await self.enqueue(player, "", 0, name, table)
        except BaseException:
            await self.tables.close(table)  # its creator could not sit down: nobody else may
            raise

    async def ticket(self, ticket: str) -> TicketInfo | None:
        """A ticket, or None if unknown (or long gone)."""
        if not TICKET_ID.match(ticket):
            return None
        raw: Any = await self.client.hgetall(self._t(ticket))
        if not raw or b"state" not in raw:
            return None
        f = {k.decode(): v.decode() for k, v in raw.items()}
        return TicketInfo(
            ticket,
            f["player"],
            f["mode"],
            f["state"],
            float(f["rating"]),
            int(f["enq"]),
            int(f["exp"]),
            int(f.get("done", 0)),
            f.get("game", ""),
            int(f.get("seat", -1)),
            f.get("token", ""),
            f.get("name", ""),
        )

    async def owned(self, ticket: str, player: str) -> TicketInfo:
        """The ticket if `player` owns it: NOT_FOUND or PERMISSION_DENIED otherwise."""
        info = await self.ticket(ticket)
        if info is None:
            raise Refused("NOT_FOUND", f"no ticket {ticket!r}")
        if info.player != player:
            raise Refused("PERMISSION_DENIED", "the ticket belongs to another player")
        return info

    async def refresh(self, ticket: str) -> TicketInfo | None:
        """Push a queued ticket's expiry back by the time-to-live (its watcher is alive)."""
        info = await self.ticket(ticket)
        if info is None or info.state != "queued":
            return info
        exp = self.clock.now_ms() + self.ticket_ttl_ms
        await self._refresh(
            keys=[self._t(ticket), self.expiry, self._p(info.player)],
            args=[exp, self.gc_ms, f"{info.mode}|{ticket}", ticket],
        )
        return await self.ticket(ticket)

    async def _retire_one(self, info: TicketInfo, state: str) -> tuple[str, bool]:
        """(the ticket's state or why not, whether this call made the change): see RETIRE."""
        keys = [
            self._t(info.ticket),
            self._q(info.mode),
            self._w(info.mode),
            self.expiry,
            self._p(info.player),
        ]
        args: list[Any] = [
            info.ticket,
            info.player,
            info.mode,
            state,
            self.clock.now_ms(),
            self.gc_ms,
            f"{info.mode}|{info.ticket}",
            self.channel,
        ]
        result, changed = await self._retire(keys=keys, args=args)
        return _s(result), bool(changed)

    async def cancel(self, ticket: str, player: str) -> bool:
        """Cancel the player's queued ticket (again: no-op); a matched or expired one cannot be."""
        info = await self.owned(ticket, player)
        result, changed = await self._retire_one(info, "cancelled")
        if result == "cancelled":
            if changed:  # not a repeated cancel
                self.metrics.count("cancelled", _label(info.mode))
            return True
        if result == "missing":
            raise Refused("NOT_FOUND", f"no ticket {ticket!r}")
        if result == "forbidden":
            raise Refused("PERMISSION_DENIED", "the ticket belongs to another player")
        raise Refused("FAILED_PRECONDITION", f"the ticket is already {result}")

    async def status(self, mode: str, players: int = 0) -> tuple[int, int]:
        """(tickets waiting, longest wait in ms) of a mode."""
        m = self.mode(mode, players)
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.zcard(self._w(m.id))
            pipe.zrange(self._w(m.id), 0, 0, withscores=True)
            count, oldest = await pipe.execute()
        wait = self.clock.now_ms() - int(oldest[0][1]) if oldest else 0
        return int(count), max(0, wait)

    # ---- the matching loop ----------------------------------------------------------------------
    async def _expire(self, members: list[bytes]) -> int:
        """Expire the tickets of these `expiry` members (`MODE|TICKET`, found due by `tick`:
        their time-to-live ran out); returns how many."""
        done = 0
        for member in members:
            mode, _, ticket = member.decode().partition("|")
            found: Any = await self.client.hget(self._t(ticket), "player")
            player = _s(found)
            info = TicketInfo(ticket, player, mode, "queued", 0.0, 0, 0)
            if await self._retire_one(info, "expired") == ("expired", True):
                # by this process: not by another as well
                self.metrics.count("expired", _label(mode))
                done += 1
        return done

    async def waiting(self, modes: Mapping[str, Mode] | None = None) -> dict[str, list[Waiting]]:
        """The queued tickets of every mode (one round trip)."""
        names = list(self.modes if modes is None else modes)
        async with self.client.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.zrange(self._q(name), 0, -1, withscores=True)
                pipe.zrange(self._w(name), 0, -1, withscores=True)
            rows: list[Any] = await pipe.execute()
        out: dict[str, list[Waiting]] = {}
        for i, name in enumerate(names):
            enq = {t.decode(): int(s) for t, s in rows[2 * i + 1]}
            found = [
                Waiting(t.decode(), float(r), enq[t.decode()])
                for t, r in rows[2 * i]
                if t.decode() in enq
            ]
            if found:
                out[name] = found
        return out

    async def tick(self, limit: int = 500) -> list[Formed]:
        """One round: expire what is due, then form every table that can be formed now.

        Nobody queued and no table open (an idle platform) is one round trip, the due
        expiries' own: every queued ticket of every mode is in `expiry` (ENQUEUE adds it to
        the three sets, RETIRE and FORM take it out of all three), so there is nothing to
        form. The full round asked each of the ~20 modes' two queues and built their tables
        five times a second whoever was waiting: half an idle matchmaker's CPU (issue 44)."""
        self.queued.clear()  # this tick sees what was enqueued before it
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.zrangebyscore(self.expiry, "-inf", self.clock.now_ms(), start=0, num=limit)
            pipe.zcard(self.expiry)
            pipe.zcard(self.tables.index)
            due, queued, tables = await pipe.execute()
        await self._expire(due)
        if not queued and not tables:
            if not self._quiet:  # the queues' depths, once: all empty
                for name in self.modes:
                    self.metrics.depth(name, 0)
                self._quiet = True
            return []
        self._quiet = False
        now = self.clock.now_ms()
        modes = {**self.modes, **await self.tables.open_modes()}
        waiting = await self.waiting(modes)
        # the modes side by side (no two share a ticket; FORM is atomic): one after another,
        # a tick with a hundred open tables to start (people opening tables at once) made
        # ~500 round trips in a row and took 0.7-0.9 s (issue 44)
        done = await asyncio.gather(
            *(
                self._tick_mode(name, mode, waiting.get(name, []), now)
                for name, mode in modes.items()
            )
        )
        return [f for formed in done for f in formed]

    @property
    def quiet(self) -> bool:
        """Whether the last tick found nobody queued and no table open."""
        return self._quiet

    async def quiet_wait(self, timeout_s: float) -> None:
        """After a quiet tick, wait up to `timeout_s` more, or until a ticket is enqueued here;
        after any other tick, return at once. The service's tick loop calls it after each
        tick: an idle matchmaker ticks less often, and a ticket ends the wait (a table opened
        here seats its creator's ticket, so it ends it too). A ticket enqueued through another
        matchmaker sharing the Redis ends that one's wait, which forms the table."""
        if not self._quiet:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.queued.wait(), timeout_s)

    async def _tick_mode(
        self, name: str, mode: Mode, queued: list[Waiting], now: int
    ) -> list[Formed]:
        """One mode's part of a tick: its tables formed; an open table nobody waits at closed."""
        formed: list[Formed] = []
        tables = form_tables(queued, mode.players, mode.policy, now)
        enqueued = {w.ticket: w.enqueued_ms for w in queued} if tables else {}
        left = len(queued)
        for table in tables:
            done = await self.form(mode, table)
            if done is not None:
                formed.append(done)
                left -= len(table.tickets)
                for t in table.tickets:
                    self.metrics.wait.observe(max(0, now - enqueued[t]) / 1000)
        if TABLE_ID.match(name):
            await self.tables.close_if_empty(name, left)
        else:
            self.metrics.depth(name, left)
        return formed

    async def form(self, mode: Mode, table: Table) -> Formed | None:
        """Seat `table` and publish it, atomically; None if a ticket was taken meanwhile."""
        async with self.client.pipeline(transaction=False) as pipe:
            for t in table.tickets:
                pipe.hmget(self._t(t), "player", "name")
            rows = await pipe.execute()
        players = [_s(r[0]) for r in rows]
        names = [_s(r[1]) for r in rows]
        if not all(players):
            self.metrics.conflicts.inc()
            return None
        game, now = f"m-{uuid.uuid4().hex}", self.clock.now_ms()
        order = list(range(mode.players))
        self.rng.shuffle(order)
        seats = [Seat(f"{BOT_PREFIX}{mode.policy.bot_policy}", True)] * mode.players
        seat_of: dict[str, int] = {}
        for ticket, player, name, seat in zip(table.tickets, players, names, order, strict=False):
            seats[seat] = Seat(player, False, name)
            seat_of[ticket] = seat
        toks = {
            seat: tokens.issue(self.secret, game, seat, self.token_ttl_ms, now_ms=now)
            for seat in seat_of.values()
        }
        match = NewMatch(
            match_id=game,
            ruleset=mode.ruleset,
            seats=seats,
            options=dict(mode.options),
            time_limit_ms=mode.time_limit_ms or self.time_limit_ms,
            hosted_after=mode.hosted_after,
            hosted_level=mode.hosted_level,
            # an open table is rated in the mode of its ruleset and size
            mode=mode_id(mode.ruleset, mode.players) if TABLE_ID.match(mode.id) else mode.id,
            tokens=toks,
        )
        args: list[Any] = [
            mode.id,
            now,
            len(table.tickets),
            game,
            encode(match)[FIELD],
            self.gc_ms,
            self.channel,
        ]
        for ticket, player in zip(table.tickets, players, strict=True):
            args += [ticket, player, seat_of[ticket], toks[seat_of[ticket]]]
        keys = [
            self._q(mode.id),
            self._w(mode.id),
            self.expiry,
            self.matches,
            *(self._t(t) for t in table.tickets),
            *(self._p(p) for p in players),
        ]
        ok, ref = await self._form(keys=keys, args=args)
        if not ok:
            self.metrics.conflicts.inc()
            return None
        if TABLE_ID.match(mode.id):
            await self.tables.started(mode.id, game)
        label = _label(mode.id)
        self.metrics.count("tables", label)
        self.metrics.count("matched", label, len(table.tickets))
        if table.bots:
            self.metrics.count("backfills", label)
            self.metrics.count("bot_seats", label, table.bots)
        return Formed(game, mode.id, seats, seat_of, _s(ref))


def _label(mode: str) -> str:
    """A metrics label for a mode id: open tables count together (one label each would let
    anyone grow the metrics without bound)."""
    return "open-table" if TABLE_ID.match(mode) else mode
