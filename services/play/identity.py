"""Who is asking: credentials to players, and what the server keeps per player, all in Redis.

A credential is a session token: random, 256 bits, given once (in an HttpOnly cookie, and in the
body for clients that send it as `Authorization: Bearer`). Redis keeps only its SHA-256, so a
copy of the database does not hand out sessions. Today the one way to get a session is a guest
identity (`Guests.create`: a name, a fresh player id); a real login would be another way to
reach `Sessions.open` for an existing player id, and everything after it stays the same.

Per player (`{ns}:play:p:PLAYER`, a hash; nothing of it lives only in a server's memory):
`name`; while waiting, `ticket` and `table`; once seated, `game`, `seat`, and the seat token
the matchmaker issued, which never leaves the server: the person's credential stands for it,
and the server presents it to the engine. The token is not kept as such (a copy of the database
would hand out seats for 24 hours): Redis keeps its expiry (`exp`) and SHA-256 (`tokh`), and the
server, which holds the deployment's secret, mints the same token again from (game, seat, exp)
when it needs it (`Sessions.seat`; a token the secret no longer makes is no seat). A record
written before this (`token` in plain text) is still read; without a secret (in-process tests)
the token is kept as it was. A player who leaves a seat (resigns, or goes back to the lobby
dead or after the end) keeps `left` (`GAME/SEAT`): that seat's routes then say why they are
closed to them (409) instead of "not yours" (403).

The person's own settings live in the same record: `hosted_level`, the bot level that plays
their seats on 托管 by default (PUT /api/me/settings; absent: none, the table's), and
`hosted_level_at` (`GAME/SEAT/LEVEL`), the seat and level the web server last recorded in that
game's log (seat.py `Seats.keep_level`), so each seat is told its level once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from ..contracts import tokens

SESSION_TTL_S = 30 * 24 * 3600
KNOWN_S = 30.0  # how long this process takes a session it has looked up as known (Sessions)
KNOWN_MAX = 16_384  # sessions held so at most (the least recently used go first)
PLAYER_TTL_S = 30 * 24 * 3600
MAX_TOKEN = 128
SEAT_FROM = """
-- KEYS: player record; ARGV: ticket, game, seat, then field/value pairs of the seat token
if redis.call('HGET', KEYS[1], 'ticket') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'ticket', 'table', 'token', 'tokh', 'exp')
redis.call('HSET', KEYS[1], 'game', ARGV[2], 'seat', ARGV[3], unpack(ARGV, 4))
return 1
"""
SEAT_FIELDS = ("game", "seat", "token", "tokh", "exp")
LEAVE = """
-- KEYS: player record; ARGV: game, seat. The player leaves that seat (if it is still theirs)
if redis.call('HGET', KEYS[1], 'game') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'seat') ~= ARGV[2]
then return 0 end
redis.call('HDEL', KEYS[1], 'game', 'seat', 'token', 'tokh', 'exp')
redis.call('HSET', KEYS[1], 'left', ARGV[1] .. '/' .. ARGV[2])
return 1
"""

HOSTED_LEVEL = "hosted_level"  # the person's default 托管 level (absent: none)
LEVEL_AT = "hosted_level_at"  # GAME/SEAT/LEVEL: that level is in that seat's game's log
LEVEL_RECORDED = """
-- KEYS: player record; ARGV: GAME/SEAT/LEVEL, LEVEL. Noted only if LEVEL is still the person's
-- default (set again meanwhile: the new level is recorded on the seat's next request)
if redis.call('HGET', KEYS[1], 'hosted_level') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'hosted_level_at', ARGV[1])
return 1
"""


@dataclass(frozen=True)
class Player:
    """A player the server knows."""

    player: str
    name: str


@dataclass(frozen=True)
class Seat:
    """Where a player sits: game, seat, and the seat token the server holds for them."""

    game: str
    seat: int
    token: str


@dataclass(frozen=True)
class Ticket:
    """Where a player waits: the matchmaker's ticket and the table."""

    ticket: str
    table: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


class Sessions:
    """Session tokens → player ids, and each player's record (name, ticket, seat).

    A session found in Redis is held here for `known_s` seconds (`player_of`): every request of
    the play API asks who sends it, and a person's answer asked it of Redis twice (the session,
    then the name), two round trips one after the other before its seat was even read (issue
    44: 28 ms at the median beside 50 bot games). What is held never changes while the session
    lives: a session names one player for its whole life and a player's name is set once; a
    session is never ended early (it expires after `SESSION_TTL_S`), so holding it changes no
    answer. A token not found is asked again every time. Where, and what, is read fresh on every
    request (the seat, the ticket: another web server may change them)."""

    def __init__(
        self,
        client: aioredis.Redis,
        namespace: str = "arena",
        secret: bytes | None = None,
        known_s: float = KNOWN_S,
    ) -> None:
        self.client = client
        self.prefix = f"{namespace}:play"
        self.secret = secret  # re-mints seat tokens kept as a hash (module docstring)
        self.known_s = known_s
        # session token -> (the player, until when it is taken as known: time.monotonic())
        self._known: OrderedDict[str, tuple[Player, float]] = OrderedDict()

    def _session(self, token: str) -> str:
        return f"{self.prefix}:s:{_digest(token)}"

    def _player(self, player: str) -> str:
        return f"{self.prefix}:p:{player}"

    async def open(self, player: str) -> str:
        """A new session token for `player`."""
        token = secrets.token_urlsafe(32)
        await self.client.set(self._session(token), player, ex=SESSION_TTL_S)
        return token

    async def player_of(self, token: str) -> Player | None:
        """The player a session token belongs to (None: unknown, expired or malformed)."""
        if not token or len(token) > MAX_TOKEN:
            return None
        now = time.monotonic()
        held = self._known.get(token)
        if held is not None and held[1] > now:
            self._known.move_to_end(token)
            return held[0]
        found: Any = await self.client.get(self._session(token))
        if found is None:
            self._known.pop(token, None)
            return None
        player = _s(found)
        name: Any = await self.client.hget(self._player(player), "name")
        if name is None:
            return None
        p = Player(player, _s(name))
        if self.known_s > 0:
            self._known[token] = (p, now + self.known_s)
            self._known.move_to_end(token)
            while len(self._known) > KNOWN_MAX:
                self._known.popitem(last=False)
        return p

    async def record(self, player: str) -> dict[str, str]:
        """The player's record as stored."""
        return self.fields(await self.client.hgetall(self._player(player)))

    def read_record(self, pipe: Any, player: str) -> None:
        """Queue the read of the player's record on a pipeline of this client (its reply:
        `fields`), to share a round trip with other commands."""
        pipe.hgetall(self._player(player))

    @staticmethod
    def fields(raw: Any) -> dict[str, str]:
        """A record as stored (HGETALL's reply) as text."""
        return {_s(k): _s(v) for k, v in raw.items()}

    async def ticket(self, player: str) -> Ticket | None:
        """Where the player waits, if anywhere."""
        r = await self.record(player)
        return Ticket(r["ticket"], r.get("table", "")) if r.get("ticket") else None

    async def seat(self, player: str) -> Seat | None:
        """Where the player sits, if anywhere (with the seat token, minted again)."""
        return self.seat_in(await self.record(player))

    def seat_in(self, r: dict[str, str]) -> Seat | None:
        """Where the player whose record is `r` sits, if anywhere (`seat`)."""
        if not r.get("game"):
            return None
        if "token" in r:  # kept in plain text (no secret, or a record from before hashing)
            return Seat(r["game"], int(r["seat"]), r["token"])
        if self.secret is None or not r.get("exp"):
            return None
        game, seat = r["game"], int(r["seat"])
        token = tokens.issue(self.secret, game, seat, ttl_ms=int(r["exp"]), now_ms=0)
        if not hmac.compare_digest(_digest(token), r.get("tokh", "")):
            return None  # the secret changed since: the matchmaker's token is void too
        return Seat(game, seat, token)

    async def set_ticket(self, player: str, ticket: str, table: str) -> None:
        """The player now waits with `ticket` at `table` (and sits nowhere)."""
        key = self._player(player)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hdel(key, *SEAT_FIELDS)
            pipe.hset(key, mapping={"ticket": ticket, "table": table})
            pipe.expire(key, PLAYER_TTL_S)
            await pipe.execute()

    async def seat_from(self, player: str, ticket: str, seat: Seat) -> bool:
        """The player's `ticket` was matched: they sit at `seat` now. A no-op (False) if the
        player has moved on to another ticket meanwhile."""
        kept: list[str | int] = ["token", seat.token]
        if self.secret is not None:
            try:
                claims = tokens.verify(self.secret, seat.token)
            except tokens.BadToken:
                return False  # not a token of this deployment: no seat
            kept = ["tokh", _digest(seat.token), "exp", claims.exp]
        done = await self.client.eval(
            SEAT_FROM, 1, self._player(player), ticket, seat.game, seat.seat, *kept
        )
        return bool(done)

    async def seat_at(self, player: str, game: str, seat: int, ttl_ms: int) -> Seat:
        """Seat the player at `seat` of `game` directly, as a host that publishes the game
        itself does (a tournament the web server runs, `arena bench play`): a seat token for
        `ttl_ms` kept as a matched ticket's is (its hash and expiry); any ticket, table or left
        seat dropped. Needs the deployment's secret (ValueError without it)."""
        if self.secret is None:
            raise ValueError("seating a player needs the deployment's secret")
        exp = int(time.time() * 1000) + ttl_ms
        token = tokens.issue(self.secret, game, seat, ttl_ms=exp, now_ms=0)
        key = self._player(player)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hdel(key, "ticket", "table", "token", "left")
            pipe.hset(key, mapping={"game": game, "seat": seat, "tokh": _digest(token), "exp": exp})
            await pipe.execute()
        return Seat(game, seat, token)

    async def leave(self, player: str, game: str, seat: int) -> bool:
        """The player leaves their seat `seat` of `game` (a no-op, False, if they sit elsewhere
        by now): they are free for the next table."""
        done = await self.client.eval(LEAVE, 1, self._player(player), game, seat)
        return bool(done)

    async def left(self, player: str) -> str:
        """The seat the player last left (`GAME/SEAT`), or ""."""
        return (await self.record(player)).get("left", "")

    async def set_hosted_level(self, player: str, level: str) -> None:
        """The person's default 托管 level (already checked; "": none)."""
        if level:
            await self.client.hset(self._player(player), HOSTED_LEVEL, level)
        else:
            await self.client.hdel(self._player(player), HOSTED_LEVEL)

    async def level_recorded(self, player: str, seat: Seat, level: str) -> None:
        """`level` is recorded for `seat` in its game's log (if it is still the default)."""
        mark = f"{seat.game}/{seat.seat}/{level}"
        await self.client.eval(LEVEL_RECORDED, 1, self._player(player), mark, level)

    async def clear_ticket(self, player: str, ticket: str) -> None:
        """The player's `ticket` ended without a seat (cancelled, expired)."""
        key = self._player(player)
        current: Any = await self.client.hget(key, "ticket")
        if current is not None and _s(current) == ticket:
            await self.client.hdel(key, "ticket", "table")


class Guests:
    """Guest identities: a name and a fresh player id (`g-` and 16 hex digits)."""

    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    async def create(self, name: str) -> tuple[Player, str]:
        """A new guest called `name` (already checked) and a session token for it."""
        player = f"g-{secrets.token_hex(8)}"
        key = self.sessions._player(player)
        await self.sessions.client.hset(
            key, mapping={"name": name, "created": int(time.time() * 1000)}
        )
        await self.sessions.client.expire(key, PLAYER_TTL_S)
        return Player(player, name), await self.sessions.open(player)
