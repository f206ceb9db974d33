"""The engine worker's logic as plain async functions over an EventStore and a Side.

No gRPC here (the servicer in grpc_server.py is a shim): every method either returns a result or
raises `Refused(code, reason)`, where `code` names the gRPC status the transport sends.

A worker holds no state that exists only in its memory. The hot-game cache is a copy of what
the log says at some version; every write names that version, and a `VersionConflict` means
another worker moved the game on, so the entry is dropped, the game reloaded, and the request
decided again against the new state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets as _secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import msgspec

from ..contracts import tokens
from ..contracts.decision_ids import DecisionIds
from ..contracts.levels import offered
from ..contracts.streams import VIEWLESS_PLAYERS, BotDecision, GameFinished, NewMatch
from ..errors import Refused as Refused  # re-exported: the engine's callers catch it here
from ..eventlog.catalog import archive_game
from ..eventlog.entry import ABANDON, ANSWER, CONTROL, EVENT, HEADER, SEED_REVEAL, decode_entry
from ..eventlog.gamelog import GameLog, Write, snapshot_due
from ..eventlog.records import (
    Abandon,
    AnswerRecord,
    Header,
    SeedReveal,
    commit_seed,
    decode_payload,
    encode_payload,
    new_salt,
)
from ..eventlog.store import EventStore, Snapshot, VersionConflict, check_game_id
from ..readside.access import TablePolicy
from ..readside.botfeed import SeatFeed
from ..readside.clock import Clock, SystemClock
from ..readside.decisions import Mark, Shown, mark_bytes, may_see, shown
from ..readside.positions import Positions
from ..readside.watch import Seen, Watch
from ..redisinfra.durability import StorageUnwritable, StorageWatch, why_unwritable
from ..redisinfra.reconnect import is_outage
from ..rules import api
from .bot_sessions import BotSessions, Session
from .hosting import Hosting, HostingRefused
from .metrics import Metrics
from .side import Appending, Effects, Secret, Side, apply_effects
from .worlds import SeatViews, World, checked, deal

log = logging.getLogger(__name__)
_json_encode, _replace = msgspec.json.encode, msgspec.structs.replace  # (a bot message each)
MAX_SEATS = 16
MAX_PICKS = 64
MAX_PICK_LEN = 64
MAX_PLAYER_ID = 200
MAX_RETRIES = 8
FINISHING = -1  # the deadline "decision" of a game over but not yet finished and archived
FINISH_AFTER_MS = 5_000  # the sweep finishes a game whose finishing did not complete by then
MAX_HOSTED_AFTER = 100
MAX_DECISIONS = 20_000  # the platform's cap on a game's decisions (`--max-decisions`)
MAX_LOG_ENTRIES = 80_000  # and on its log's entries (`--max-log-entries`)
SWEEP_RETRY_MS = 30_000  # a game the sweep failed on is tried again after this long
PENDING_EVERY_MS = 1_000  # the sweep counts the pending decisions (a gauge) this often
DECISION_LIMIT, LOG_LIMIT = "decision_limit", "log_limit"  # game_ended's reasons for the caps
HOSTED_PLAYER = "bot:heuristic"  # who plays a seat on 托管 when its table names no level
# games kept hot (`--cache-size`): at 512, 1,000 random-bot games in flight were read back from
# their logs at nearly every answer (1,244 us of CPU per decision over all processes against
# 162 at 200 games; arena bench e2e --games 1000, issue 44)
CACHE_SIZE = 4096


class GameLock(asyncio.Lock):
    """A hot game's lock (`Hot.lock`), with `take`: what `acquire` does when nobody holds the
    lock or waits for it, without its coroutine (`answer_many`'s answers, one per decision)."""

    def take(self) -> bool:
        """Take the lock at once if it is free and nobody waits for it; else False (then
        `acquire` would wait, and the caller goes the way that awaits)."""
        if self._locked or self._waiters:  # type: ignore[has-type]
            return False
        self._locked = True
        return True

    def free(self) -> None:
        """`release`, without its two calls when nobody waits (`answer_many`'s answers)."""
        if self._waiters or not self._locked:
            self.release()  # (wakes a waiter; or raises for a lock not held)
        else:
            self._locked = False


class _Stale(Exception):
    """The cached game was behind the log: reload and decide again."""


@dataclass
class Hot:
    """A game as of `log.version`: engine state, header, and the answers seen so far."""

    log: GameLog
    game: api.Game
    header: Header
    answers: dict[int, tuple[AnswerRecord, int]] = field(default_factory=dict)
    indexed_after: int = 0  # answers at or before this version are not in `answers`
    finished: bool = False  # the seed reveal is in the log
    time_limit_ms: int = 0
    feed: SeatFeed = field(default_factory=SeatFeed)  # bot seats' unseen events (botfeed.py)
    hosting: Hosting = field(default_factory=Hosting)  # 托管 (hosting.py)
    due: tuple[int, int] | None = None  # (decision, due at ms) as this worker last set it
    # seat -> its bot's token, and when a message is given a new one (half its lifetime on)
    bot_tokens: dict[int, tuple[str, int]] = field(default_factory=dict)
    # every viewer's position of every entry (eventlog/positions.py), kept up to the log and
    # ahead of an append in flight (a bot's message names the position after it)
    positions: Positions = field(default_factory=Positions)
    ids: DecisionIds = field(kw_only=True)  # opaque decision ids (contracts/decision_ids.py)
    seat_views: SeatViews = field(default_factory=SeatViews)  # for Determinize (worlds.py)
    # answers to one game are decided one at a time in this worker: the state is advanced in
    # place before its append, so nobody may read it half-way
    lock: GameLock = field(default_factory=GameLock, compare=False, repr=False)
    people: bool = field(init=False)  # a person sits at the table (not a bot-only game)

    def __post_init__(self) -> None:
        self.people = not all(s.bot for s in self.header.seats)


class _Step(msgspec.Struct):
    """An answer applied to a hot game and not yet appended (`Games._advance`). (A Struct: one
    is made per answer, and a dataclass's __init__ runs as Python.)"""

    rec: AnswerRecord
    before: int  # the log's version before it
    items: list[tuple[str, bytes]]  # the entries to append: the answer, its events, ...
    effects: Effects
    over: bool  # the game ended with it: finish it once appended
    opaque: int  # the answered decision's opaque id
    next: api.Decision | None  # what is pending after it


Answering = tuple[str, str, int, Sequence[str]]
"""A bot's answer for `Games.answer_many`: (game, seat token, opaque decision id, picks)."""


class Result(msgspec.Struct, frozen=True):
    """What SubmitAction returns: the logged answer, the version after it, what is pending now;
    for the client, the answer's opaque decision id and the answering seat's position after it.
    (A Struct: one is made per answer, and a frozen dataclass costs several times as much.)"""

    answer: AnswerRecord
    version: int
    duplicate: bool
    next: api.Decision | None
    over: bool
    decision_id: int = 0
    position: int = 0


def _now_ms() -> int:
    return int(time.time() * 1000)


class Games:
    """Creates games and applies answers; one instance per worker process."""

    def __init__(
        self,
        store: EventStore,
        side: Side,
        secret: bytes,
        *,
        cache_size: int = CACHE_SIZE,
        snapshot_every: int = 200,
        default_time_limit_ms: int = 60_000,
        bot_repost_ms: int = 5_000,
        bot_token_ttl_ms: int = 600_000,
        spectator_delay_ms: int = 0,
        clock: Clock | None = None,
        archive_dir: Path | None = None,
        metrics: Metrics | None = None,
        max_decisions: int = MAX_DECISIONS,
        max_log_entries: int = MAX_LOG_ENTRIES,
    ) -> None:
        self.store, self.side, self.secret = store, side, secret
        # a game past either cap is ended by the platform, a draw with its reason (`_capped`)
        self.max_decisions, self.max_log_entries = max_decisions, max_log_entries
        self.failing: dict[str, tuple[int, int]] = {}  # game -> (first failure, retry at) ms
        self.counted_ms = 0  # when the sweep last counted the pending decisions
        self.storage: StorageWatch | None = None  # told of archive writes (worker.py sets it)
        self.tokens = tokens.Verifier(secret)
        self.bot_token_ttl_ms = bot_token_ttl_ms
        self.clock = clock or SystemClock()
        # what a viewer may read of a game, and how far behind (services/readside)
        self.watch = Watch(store, self.clock, TablePolicy(max(0, spectator_delay_ms)), archive_dir)
        self.cache: OrderedDict[str, Hot] = OrderedDict()
        self.cache_size = cache_size
        self.snapshot_every = snapshot_every
        self.default_time_limit_ms = default_time_limit_ms
        self.bot_repost_ms = bot_repost_ms
        self.archive_dir = archive_dir
        self.metrics = metrics or Metrics()
        # read when scraped: a gauge set on every cache change stayed at its last value once
        # the games were archived and dropped (40 forever after a tournament)
        self.metrics.games_active.set_function(
            lambda: sum(not (h.game.over or h.finished) for h in list(self.cache.values()))
        )
        # bot workers' streams (bot_sessions.py); a decision held past twice its deadline is
        # let go (the sweep has published it again by then, if it was not answered)
        self.sessions = BotSessions(forget_s=2 * bot_repost_ms / 1000)
        self._handing: set[asyncio.Task[None]] = set()  # ended sessions' hand-backs
        self.bot_key = tokens.bot_key(secret, side.namespace)  # what opens one

    # ---- cache -------------------------------------------------------------------------------

    def _put(self, game_id: str, hot: Hot) -> None:
        self.cache[game_id] = hot
        self.cache.move_to_end(game_id)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    def evict(self, game_id: str) -> None:
        """Drop a game from the cache (it is reloaded from the log when next needed)."""
        self.cache.pop(game_id, None)

    async def get(self, game_id: str) -> Hot:
        """The game from the cache, else loaded from its log; NOT_FOUND if there is none."""
        hot = self.cache.get(game_id)
        self.metrics.count("cache", "true" if hot is not None else "false")
        if hot is not None:
            self.cache.move_to_end(game_id)
            return hot
        hot = await self._load(game_id)
        self._put(game_id, hot)
        return hot

    @contextlib.asynccontextmanager
    async def settled(self, game_id: str) -> AsyncIterator[Hot]:
        """The game with no answer half-way: `_apply` advances the state in place before its
        append lands, under the game's lock, so a reader that shows the pending decision reads
        under that lock too (it waits for one append at most). Without it a client could be
        shown a decision whose events are not in the log yet, at a position before them, and
        if that append then failed, a decision that never existed."""
        for _ in range(MAX_RETRIES):
            hot = await self.get(game_id)
            async with hot.lock:
                if self.cache.get(game_id) is not hot:
                    continue  # the append failed and the game was evicted: read it again
                yield hot
                return
        raise Refused("ABORTED", "the game kept changing; try again")

    async def _load(self, game_id: str) -> Hot:
        loaded = await GameLog.load(self.store, game_id)
        if loaded.snapshot is not None and not api.snapshot_current(loaded.snapshot.state):
            # stored by an engine with another state format: rebuild from the whole log
            loaded = await GameLog.load(self.store, game_id, use_snapshot=False)
        first = await self.store.read(game_id, 0, 1)
        if not first:
            raise Refused("NOT_FOUND", f"no game {game_id!r}")
        header = decode_payload(decode_entry(first[0][1]).payload, Header)
        secret = await self.side.get_secret(game_id)
        reveal = next(
            (decode_payload(e.payload, SeedReveal) for e in loaded.tail if e.kind == SEED_REVEAL),
            None,
        )
        seed = secret.seed if secret else reveal.seed if reveal else None
        if loaded.snapshot is not None:
            game = api.restore(loaded.snapshot.state)
        elif seed is not None:
            game = api.new_game(header.ruleset, header.players, seed, header.options)
            api.advance(game)
        else:
            raise Refused("INTERNAL", f"game {game_id!r} has neither a snapshot nor a seed")
        hot = Hot(
            loaded.log,
            game,
            header,
            finished=reveal is not None,
            indexed_after=loaded.snapshot.version if loaded.snapshot else 0,
            time_limit_ms=(secret.time_limit_ms if secret else 0) or self.default_time_limit_ms,
            hosting=Hosting(
                after=secret.hosted_after if secret else 0,
                level=secret.hosted_level if secret else "",
            ),
            ids=DecisionIds(self.secret, game_id),
        )
        base = hot.indexed_after
        # the entries before the snapshot: for positions, and for 托管 at a person's seat
        head = (
            [(q, decode_entry(data)) for q, data in await self.store.read(game_id, 0, base)]
            if base
            else []
        )
        hot.positions.add_entries(head)
        hot.positions.add_entries(enumerate(loaded.tail, base + 1))
        if not all(s.bot for s in header.seats):  # a person's seat: 托管 is in the log
            hot.hosting.fold(e for _, e in head)
            hot.hosting.fold(loaded.tail)
        current: AnswerRecord | None = None
        for i, entry in enumerate(loaded.tail):
            seq = base + 1 + i
            if entry.kind == ANSWER:
                current = decode_payload(entry.payload, AnswerRecord)
                api.submit(
                    game,
                    api.Answer(
                        decision=current.decision, seat=current.seat, picks=list(current.picks)
                    ),
                )
                hot.answers[current.decision] = (current, seq)
            elif entry.kind == EVENT and current is not None:
                hot.answers[current.decision] = (current, seq)
            elif entry.kind == ABANDON:  # the platform ended it: re-run as verify does
                api.abandon(game, decode_payload(entry.payload, Abandon).reason)
        return hot

    async def _answered(self, hot: Hot, opaque_id: int) -> tuple[AnswerRecord, int] | None:
        """The logged answer to the decision whose opaque id is `opaque_id` and the version
        after its batch, if any (an id no decision of the game has: None)."""
        number = hot.ids.number(opaque_id)
        if number is None:  # not made yet by this copy of the game: try the answers it knows
            number = next((n for n in hot.answers if hot.ids.opaque(n) == opaque_id), None)
        if number is not None and (number in hot.answers or hot.indexed_after == 0):
            return hot.answers.get(number)
        if hot.indexed_after == 0:
            return None
        current: AnswerRecord | None = None
        found: tuple[AnswerRecord, int] | None = None
        for seq, data in await self.store.read(hot.log.game, 0, hot.indexed_after):
            entry = decode_entry(data)
            if entry.kind == ANSWER:
                current = decode_payload(entry.payload, AnswerRecord)
            if current is not None and hot.ids.opaque(current.decision) == opaque_id:
                found = (current, seq)
        return found

    # ---- create ------------------------------------------------------------------------------

    async def authorize_create(self, fields: tokens.CreateFields, signature: bytes) -> None:
        """Refuse a GameService create request unless it is signed with the create key, fresh,
        and its nonce unseen (UNAUTHENTICATED, or PERMISSION_DENIED for a replay). Matches
        from the `{ns}:matches` stream need no signature: writing that stream takes Redis."""
        try:
            tokens.check_create(self.secret, fields, signature, now_ms=_now_ms())
        except tokens.BadCreate as exc:
            raise Refused("UNAUTHENTICATED", str(exc)) from None
        if not await self.side.claim_nonce(fields.nonce, 2 * tokens.CREATE_SKEW_MS):
            raise Refused("PERMISSION_DENIED", "create request already used (sign a new one)")

    async def create_game(self, match: NewMatch) -> tuple[bool, int]:
        """Start the match's game (game id = match id); (created, version). Idempotent."""
        game_id = _game_id(match.match_id)
        if not 1 <= len(match.seats) <= MAX_SEATS:
            raise Refused("INVALID_ARGUMENT", f"a table has 1–{MAX_SEATS} seats")
        if any(len(s.player) > MAX_PLAYER_ID for s in match.seats):
            raise Refused("INVALID_ARGUMENT", f"player ids have at most {MAX_PLAYER_ID} characters")
        if not 0 <= match.time_limit_ms <= 24 * 3600 * 1000:
            raise Refused("INVALID_ARGUMENT", "time_limit_ms out of range")
        if not 0 <= match.hosted_after <= MAX_HOSTED_AFTER:
            raise Refused("INVALID_ARGUMENT", f"hosted_after must be 0–{MAX_HOSTED_AFTER}")
        if len(match.hosted_level) > MAX_PLAYER_ID:
            raise Refused(
                "INVALID_ARGUMENT", f"hosted_level has at most {MAX_PLAYER_ID} characters"
            )
        if not all(isinstance(v, bool | int | float | str | None) for v in match.options.values()):
            raise Refused("INVALID_ARGUMENT", "ruleset options are plain values (no lists or maps)")
        seed = match.seed if match.seed is not None else _secrets.randbits(63)
        if not 0 <= seed < 2**63:
            raise Refused("INVALID_ARGUMENT", "seed out of range")
        try:  # validate before anything is stored: a bad option may fail only in the setup
            game = api.new_game(match.ruleset, len(match.seats), seed, dict(match.options))
            events = api.advance(game)
        except (api.UnknownOption, ValueError, TypeError, KeyError, msgspec.MsgspecError) as exc:
            raise Refused("INVALID_ARGUMENT", f"cannot start that game: {exc}") from None
        limit = match.time_limit_ms or self.default_time_limit_ms
        secret = await self.side.put_secret(
            game_id, Secret(seed, new_salt(), limit, match.hosted_after, match.hosted_level)
        )
        if secret.seed != seed:  # created before (a retry, a match seen twice): its stored seed
            game = api.new_game(match.ruleset, len(match.seats), secret.seed, dict(match.options))
            events = api.advance(game)
        # (else the game just validated is the game: a deal is a function of its inputs, and
        # setting one up twice cost 1.1 ms a game, ~4 us of every decision of a bot game)
        header = Header(
            game_id=game_id,
            ruleset=match.ruleset,
            players=len(match.seats),
            rules_version=api.RULES_VERSION,
            seats=list(match.seats),
            seed_commitment=commit_seed(secret.seed, secret.salt),
            options=dict(match.options),
            started_at_ms=_now_ms(),
        )
        items = [(HEADER, encode_payload(header))] + [(EVENT, api.encode_event(e)) for e in events]
        log = GameLog(self.store, game_id)
        hot = Hot(
            log,
            game,
            header,
            indexed_after=len(items),
            time_limit_ms=secret.time_limit_ms,
            feed=SeatFeed.from_start(
                [i for i, s in enumerate(match.seats) if s.bot and s.player not in VIEWLESS_PLAYERS]
            ),
            hosting=Hosting(after=secret.hosted_after, level=secret.hosted_level),
            ids=DecisionIds(self.secret, game_id),
        )
        hot.feed.add(2, events, [data for _, data in items[1:]])  # the header is entry 1
        for seq in range(1, len(items) + 1):
            hot.positions.add(seq, None)
        effects = self._effects(hot, len(items))
        # cached and locked before the append publishes the first decision: an answer that
        # arrives at once waits for the snapshot instead of loading a second copy of the game
        async with hot.lock:
            self._put(game_id, hot)
            try:
                await log.append(items, self._write(game_id, effects))
            except VersionConflict:  # the match was seen before: make sure its game is moving
                self.evict(game_id)
            except BaseException:
                self.evict(game_id)
                raise
            else:
                await log.save_snapshot(api.snapshot(game))
                if effects.deadline is None:
                    await self._finish_soon(hot)  # over before its first decision
                return True, log.version
        hot = await self.get(game_id)
        await self._schedule(hot, only_new=True)
        return False, hot.log.version

    # ---- answers -----------------------------------------------------------------------------

    async def submit_action(
        self, game_id: str, token: str, decision: int, picks: list[str]
    ) -> Result:
        """Answer the decision whose opaque id is `decision` for the token's seat (see the
        module docstring for the rules)."""
        claims = self._claims_of(game_id, token)
        if len(picks) > MAX_PICKS or any(len(p) > MAX_PICK_LEN for p in picks):
            raise Refused("INVALID_ARGUMENT", "too many or too long picks")
        if claims.b and not self._bot_seat(await self.get(game_id), claims.s):
            # a token a bot worker was given while the person's seat was on 托管
            raise Refused("PERMISSION_DENIED", "a person plays this seat now, not its bot")
        return await self._decide(game_id, claims.s, decision, list(picks), auto=False)

    def _claims_of(self, game_id: str, token: str) -> tokens.SeatClaims:
        """The claims of a genuine token for `game_id`."""
        try:
            claims = self.tokens.verify(token)
        except tokens.BadToken as exc:
            raise Refused("UNAUTHENTICATED", str(exc)) from None
        if claims.g != game_id:
            raise Refused("PERMISSION_DENIED", "the seat token is for another game")
        _game_id(game_id)
        return claims

    async def viewer_of(self, game_id: str, token: str) -> int:
        """Whom a read with `token` sees the game as: SPECTATOR without one, else its seat.

        A bot's token for a person's seat (given while it was on 托管) reads only while a bot
        plays the seat; looked at fresh, since another worker may have applied the take-back."""
        if not token:
            return api.SPECTATOR
        claims = self._claims_of(game_id, token)
        if claims.b:
            hot = await self.get(game_id)
            if (
                not self._bot_seat(hot, claims.s)
                or await self.store.head(game_id) != hot.log.version
            ):
                self.evict(game_id)
                if not self._bot_seat(await self.get(game_id), claims.s):
                    raise Refused("PERMISSION_DENIED", "a person plays this seat now, not its bot")
        return claims.s

    def _seat_of(self, game_id: str, token: str) -> int:
        """The seat a genuine token for `game_id` names."""
        return self._claims_of(game_id, token).s

    @staticmethod
    def _bot_seat(hot: Hot, seat: int) -> bool:
        """Whether a bot plays `seat` now (a bot's seat, or a person's on 托管)."""
        seats = hot.header.seats
        return 0 <= seat < len(seats) and (
            not hot.people or seats[seat].bot or seat in hot.hosting.hosted
        )  # (a table of bots only: every seat, without a look at it)

    async def set_hosted(
        self,
        game_id: str,
        token: str,
        hosted: bool,
        resign: bool = False,
        level: str = "",
        level_only: bool = False,
    ) -> tuple[int, bool]:
        """Put the token's seat on 托管 (`hosted`), take it back, or resign (its bot plays to
        the end): one `control` entry (hosting.py). Returns (log version, whether the seat is on
        托管 now); a repeated request changes nothing. Only the person's own token may: a bot's
        (SeatClaims.b) never changes who plays a seat. `level`: the bot level the person
        chooses for the seat's 托管 (one of the offered levels; "": the seat's earlier choice,
        else the table's). `level_only`: record `level` for the seat's 托管 (now, if it is on
        托管, and later) without changing who plays it: the person's default level, which the
        web server records for each seat it opens (a `control` entry of reason `level`)."""
        if level_only and not level:
            raise Refused("INVALID_ARGUMENT", "level_only needs a level")
        if level and level not in offered():
            raise Refused(
                "INVALID_ARGUMENT", f"level must be one of {', '.join(offered())} (or none)"
            )
        claims = self._claims_of(game_id, token)
        if claims.b:
            raise Refused("PERMISSION_DENIED", "a bot's token cannot change who plays a seat")
        seat = claims.s
        for _ in range(MAX_RETRIES):
            hot = await self.get(game_id)
            async with hot.lock:
                if self.cache.get(game_id) is not hot:
                    continue  # evicted while we waited
                if not 0 <= seat < len(hot.header.seats) or hot.header.seats[seat].bot:
                    raise Refused("FAILED_PRECONDITION", f"seat {seat} is not a person's seat")
                if hot.game.over or hot.finished:
                    raise Refused("FAILED_PRECONDITION", "the game is over")
                try:
                    control = hot.hosting.request(seat, hosted, resign, level, level_only)
                except HostingRefused as exc:
                    raise Refused("FAILED_PRECONDITION", str(exc)) from None
                if control is None:
                    return hot.log.version, seat in hot.hosting.hosted
                hot.hosting.apply(control)
                hot.positions.add(hot.log.version + 1, None)
                d = api.pending(hot.game)
                # the seat's pending decision changes hands: to the bots' stream, or back to
                # the person with a fresh clock (a bot already holding it may still answer); a
                # level alone changes hands only for a seat on 托管 (its bot's level), and
                # never restarts the person's clock
                effects = (
                    self._effects(hot, hot.log.version + 1)
                    if d is not None
                    and d.seat == seat
                    and (not level_only or seat in hot.hosting.hosted)
                    else Effects()
                )
                if not await self._append(hot, [(CONTROL, encode_payload(control))], effects):
                    continue
                return hot.log.version, control.hosted
        raise Refused("ABORTED", "the game kept changing; try again")

    async def determinize(
        self, game_id: str, token: str, decision: int, worlds: list[World]
    ) -> list[bytes]:
        """States the token's seat could be in at its pending decision (opaque id `decision`),
        one per world (worlds.py). Only a bot's token for a seat a bot plays now
        (PERMISSION_DENIED), only at that seat's pending decision (FAILED_PRECONDITION)."""
        claims = self._claims_of(game_id, token)
        if not claims.b:
            raise Refused("PERMISSION_DENIED", "worlds are dealt for bots' look-ahead only")
        seat = claims.s
        hot = await self.get(game_id)
        worlds = checked(worlds, len(hot.header.seats))
        for fresh in (False, True):
            if fresh:  # another worker may have moved the game on: read the log again
                self.evict(game_id)
                hot = await self.get(game_id)
            if not self._bot_seat(hot, seat):
                continue
            async with hot.lock:  # the state is advanced in place under the lock
                d = api.pending(hot.game)
                if (
                    self.cache.get(game_id) is not hot
                    or d is None
                    or hot.game.over
                    or d.seat != seat
                    or hot.ids.opaque(d.id) != decision
                ):
                    continue
                version, after = hot.log.version, hot.seat_views.behind(seat)
                records = await self.store.read(game_id, after, version) if after < version else []
                view = hot.seat_views.fold(seat, records, version)
                game = api.fork(hot.game)
            self.metrics.count("worlds", "dealt")
            return deal(game, seat, view, decision, worlds)
        if not self._bot_seat(hot, seat):
            raise Refused("PERMISSION_DENIED", "a person plays this seat now, not its bot")
        raise Refused("FAILED_PRECONDITION", f"decision {decision} is not the seat's pending one")

    # ---- views (what a viewer receives is the read side's: services/readside) ----------------

    def position(self, hot: Hot, viewer: int, version: int) -> int:
        """`viewer`'s position at log version `version` (what clients are shown for it)."""
        return hot.positions.position(viewer, version)

    async def shown(self, hot: Hot, viewer: int, version: int | None = None) -> Shown | None:
        """The decision pending in ``hot`` as ``viewer`` may see it (None: none, the game is
        over, or the viewer may not learn of it), at its position ``version`` (default: the
        log's head), with its deadline. The caller holds the game settled."""
        d = api.pending(hot.game)
        if d is None or hot.game.over or not may_see(d.kind, d.seat, hot.game.current, viewer):
            return None
        position = self.position(hot, viewer, hot.log.version) if version is None else version
        deadline = await self.deadline_ms(hot, d)
        opaque = hot.ids.opaque(d.id)
        return shown(d, viewer, hot.game.current, id=opaque, version=position, deadline_ms=deadline)

    async def view(self, game_id: str, viewer: int) -> tuple[Seen, Shown | None]:
        """What ``viewer`` may read of the game now (GetView): its entries as envelopes and, if
        it watches live, the pending decision as it may see it."""
        async with self.settled(game_id) as hot:  # the events before the decision, logged
            seen = await self.watch.page(
                game_id, viewer, hot.log.version, hot.game.over, hot.positions, hot.ids.opaque
            )
            pending = await self.shown(hot, viewer) if seen.live else None
        return seen, pending

    async def decision(self, game_id: str, viewer: int) -> tuple[int, bool, Shown | None]:
        """(``viewer``'s position, over, the pending decision as it may see it) now
        (GetDecision). A delayed spectator gets its released position and no decision."""
        async with self.settled(game_id) as hot:
            moved = await self.store.head(game_id) != hot.log.version
        if moved:
            self.evict(game_id)  # another worker moved on: a poll sees it
        async with self.settled(game_id) as hot:  # no decision before its events land
            head, over = hot.log.version, hot.game.over
            if self.watch.delay_for(viewer, over) > 0:  # a delayed spectator: no live decision
                upto, ended = await self.watch.released(game_id, viewer, head, over)
                return self.position(hot, viewer, upto), ended, None
            return self.position(hot, viewer, head), over, await self.shown(hot, viewer)

    async def next_for(self, game_id: str, r: Result) -> Shown | None:
        """What SubmitAction tells the answering seat is pending after its answer ``r``, as it
        may see it (none if the game moved on meanwhile)."""
        if r.next is None or r.over:
            return None
        async with self.settled(game_id) as hot:
            if api.pending(hot.game) != r.next:
                return None
            return await self.shown(hot, r.answer.seat, r.position)

    async def view_entries(
        self, game_id: str, viewer: int, after: int, upto: int = 0
    ) -> AsyncIterator[tuple[int, bytes]]:
        """`viewer`'s entries after its position `after`, as (position, envelope), live ones as
        they come (held the spectator delay for a spectator of a live game) until the seed
        reveal, or, with `upto` > 0, until its position `upto` (at most where the log is now).
        NOT_FOUND for an unknown game."""
        hot = await self.synced(game_id)
        async for e in self.watch.tail(
            game_id, viewer, after, upto, hot.game.over, hot.positions, hot.ids.opaque
        ):
            yield e

    async def synced(self, game_id: str) -> Hot:
        """The game with its positions read up to the log's head now (another worker may have
        appended since this copy was loaded): for mapping a client's position to a version."""
        hot = await self.get(game_id)
        head = await self.store.head(game_id)
        if head > hot.positions.head:
            hot.positions.add_records(await self.store.read(game_id, hot.positions.head, head))
        return hot

    async def _decide(
        self, game_id: str, seat: int, decision: int, picks: list[str], *, auto: bool
    ) -> Result:
        for attempt in range(MAX_RETRIES):
            cached = game_id in self.cache
            hot = await self.get(game_id)
            async with hot.lock:
                if self.cache.get(game_id) is not hot:
                    continue  # evicted while we waited: decide on a fresh load
                d = api.pending(hot.game)
                # the state is at the log's version, so its pending decision has no answer yet:
                # only another id needs the (possibly stored) answer looked up
                pending = d is not None and hot.ids.opaque(d.id) == decision
                prior = None if pending else await self._answered(hot, decision)
                if prior is not None:
                    if prior[0].seat != seat:
                        raise Refused("PERMISSION_DENIED", "that decision belonged to another seat")
                    return Result(
                        prior[0],
                        prior[1],
                        True,
                        api.pending(hot.game),
                        hot.game.over,
                        decision,
                        hot.positions.position(seat, prior[1]),
                    )
                if d is None or hot.game.over:
                    raise Refused("FAILED_PRECONDITION", "the game is over")
                if not pending:
                    if (
                        cached
                        and attempt == 0
                        and await self.store.head(game_id) != hot.log.version
                    ):
                        self.evict(game_id)  # another worker moved on: look again
                        continue
                    # the id is not echoed back: an unknown id gets the same words as a stale one
                    raise Refused("FAILED_PRECONDITION", "that decision is not pending")
                if d.seat != seat:
                    raise Refused("PERMISSION_DENIED", "that decision is for another seat")
                try:
                    return await self._apply(hot, AnswerRecord(d.id, d.seat, picks, auto))
                except _Stale:
                    continue
        raise Refused("ABORTED", "the game kept changing; try again")

    async def _apply(self, hot: Hot, rec: AnswerRecord) -> Result:
        """Advance the cached state in place (an illegal answer changes nothing), then append
        the answer with what it makes due (`_effects`); if the append does not happen the
        advanced state is dropped from the cache.

        Advancing in place instead of on a fork saves a full encode/decode of the state per
        answer, which profiling showed as ~45% of an engine worker's CPU per decision.
        """
        step = self._advance(hot, rec, _now_ms())
        write = self._write(hot.log.game, step.effects)
        try:
            await hot.log.append(step.items, write)
        except VersionConflict:
            self.metrics.conflicts.inc()
            self.evict(hot.log.game)
            raise _Stale from None
        except BaseException:
            self.evict(hot.log.game)  # the state ran ahead of a log that did not take it
            raise
        self._landed(hot, step)
        self._count_tables(int(hot.people), int(not hot.people))
        if snapshot_due(step.before, hot.log.version, self.snapshot_every):
            await hot.log.save_snapshot(api.snapshot(hot.game))
        if step.over:
            await self._finish_soon(hot)
        return self._result(hot, step)

    def _advance(self, hot: Hot, rec: AnswerRecord, now: int, opaque: int = 0) -> _Step:
        """`rec` applied to the cached state in place (Refused INVALID_ARGUMENT for an illegal
        answer, which changes nothing): the entries to append for it and what they make due
        (deadlines from `now`, ms). `opaque`: the answered decision's id, if the caller has it.
        No await: the caller holds the game's lock, and appends the entries or evicts it."""
        game = hot.game
        try:  # (the rules keep a copy of the picks: `rec`'s own list is not kept)
            events = api.submit(
                game, api.Answer(decision=rec.decision, seat=rec.seat, picks=rec.picks)
            )
        except api.IllegalAnswer as exc:
            raise Refused("INVALID_ARGUMENT", f"illegal answer: {exc}") from None
        before = hot.log.version
        encoded = list(map(api.encode_event, events))
        if hot.feed.fed:  # (a feed with no seat fed keeps nothing: botfeed.py)
            hot.feed.add(before + 2, events, encoded)  # entry before + 1 is the answer
        items = [(ANSWER, encode_payload(rec))]
        items += zip(repeat(EVENT), encoded)
        # the time-out that turns 托管 on, if this is it (a person's seat only: a bot seat's
        # default answer, when no bot answered by its deadline, puts nothing on 托管)
        if hot.people and not hot.header.seats[rec.seat].bot:
            control = hot.hosting.answered(rec)
            if control is not None:
                items.append((CONTROL, encode_payload(control)))
        after = before + len(items)
        if rec.decision >= self.max_decisions or after >= self.max_log_entries:
            end = self._capped(hot, rec.decision, after)  # (the caps are rarely reached)
            if end is not None:  # past the platform's cap: ended here, in the same batch
                items += self._abandoning(hot, end)
                after = before + len(items)
        hot.positions.add_answer(before + 1, rec.seat, len(items) - 1)
        d = game.pending
        effects = self._effects(hot, after, answered=rec.decision, now=now, d=d)
        return _Step(
            rec,
            before,
            items,
            effects,
            game.over or d is None,
            opaque or hot.ids.opaque(rec.decision),
            d,
        )

    def _landed(self, hot: Hot, step: _Step) -> None:
        """The answer of `step` is in the log: note it. (The answers logged are counted by
        the caller: `_count_tables`; a snapshot due is stored by the caller.)"""
        rec = step.rec
        hot.answers[rec.decision] = (rec, hot.log.version)
        self.sessions.answered(hot.log.game, step.opaque)

    def _count_tables(self, people: int, bots: int) -> None:
        """Count the answers logged, by table (`arena_engine_table_answers`)."""
        if people:
            self.metrics.count("tables", "people", people)
        if bots:
            self.metrics.count("tables", "bots", bots)

    def _result(self, hot: Hot, step: _Step) -> Result:
        """What SubmitAction returns for the answer of `step`, just logged."""
        version = hot.log.version
        return Result(
            step.rec,
            version,
            False,
            step.next,
            hot.game.over,
            step.opaque,
            hot.positions.position(step.rec.seat, version),
        )

    async def answer_many(
        self, answers: Sequence[Answering], done: Callable[[int, Result | BaseException], None]
    ) -> None:
        """Bot answers of one session message (game, seat token, opaque decision id, picks),
        each taken as `submit_action` would take it, its outcome handed to `done(i, ...)` (a
        Result, or the Refused or error it met) as soon as it is known.

        The usual answer (its game hot here and idle, the decision the seat's pending one) is
        decided at once, without a task or an await of its own: the rules advance each game
        in place, then every game's entries go out in one append (`Side.append_many`: one
        script call on Redis), then their decisions to the bot sessions in one push. Every
        other answer (a game to load, a duplicate, a decision no longer pending, a game busy
        with another request) goes the one-at-a-time way, concurrently, as before."""
        steps: list[tuple[int, Hot, _Step]] = []
        slow: list[int] = []
        hits, now = 0, _now_ms()
        for i, (game_id, token, decision, picks) in enumerate(answers):
            try:
                ready = self._ready(game_id, token, decision, picks, now)
                if ready is None:
                    slow.append(i)
                    continue
                hot, d = ready  # (its lock taken)
                hits += 1
                try:
                    rec = AnswerRecord(d.id, d.seat, list(picks), False)
                    step = self._advance(hot, rec, now, decision)
                except BaseException:
                    hot.lock.release()
                    raise
            except Exception as exc:  # noqa: BLE001 - this answer's refusal, in its outcome
                done(i, exc)
                continue
            steps.append((i, hot, step))
        self.metrics.count("cache", "true", hits)
        later = [self._answer_alone(i, answers[i], done) for i in slow]
        tasks = [asyncio.ensure_future(c) for c in later]
        if steps:
            await self._append_steps(answers, steps, done)
        if tasks:
            await asyncio.gather(*tasks)

    def _ready(
        self, game_id: str, token: str, decision: int, picks: Sequence[str], now_ms: int
    ) -> tuple[Hot, api.Decision] | None:
        """The hot game an answer of `answer_many` can be decided in at once (see there), its
        lock taken, and its pending decision; else None (a game busy, or free but a woken
        waiter's turn, among others); Refused as `submit_action` refuses a bad token or bad
        picks."""
        try:
            claims = self.tokens.verify(token, now_ms)
        except tokens.BadToken as exc:
            raise Refused("UNAUTHENTICATED", str(exc)) from None
        if claims.g != game_id:
            raise Refused("PERMISSION_DENIED", "the seat token is for another game")
        if len(picks) > MAX_PICKS or (picks and max(map(len, picks)) > MAX_PICK_LEN):
            raise Refused("INVALID_ARGUMENT", "too many or too long picks")
        hot = self.cache.get(game_id)  # (a game in the cache has a valid id)
        if hot is None or not hot.lock.take():
            return None
        seat = claims.s
        # (a table of bots only: a seat out of range is refused by the one-at-a-time path)
        if claims.b and hot.people and not self._bot_seat(hot, seat):
            hot.lock.free()
            raise Refused("PERMISSION_DENIED", "a person plays this seat now, not its bot")
        d = hot.game.pending
        # (its id was made with its message: not made yet, the one-at-a-time path makes it)
        if d is None or hot.game.over or d.seat != seat or hot.ids.by_number.get(d.id) != decision:
            hot.lock.free()
            return None  # the one-at-a-time path says why, or finds the duplicate
        self.cache.move_to_end(game_id)
        return hot, d

    async def _answer_alone(
        self,
        i: int,
        answer: Answering,
        done: Callable[[int, Result | BaseException], None],
    ) -> None:
        r: Result | BaseException
        try:
            r = await self.submit_action(*answer[:3], list(answer[3]))
        except Exception as exc:  # noqa: BLE001 - this answer's refusal, in its outcome
            r = exc
        done(i, r)

    async def _append_steps(
        self,
        answers: Sequence[Answering],
        steps: list[tuple[int, Hot, _Step]],
        done: Callable[[int, Result | BaseException], None],
    ) -> None:
        """Append the steps of `answer_many` (each game's lock held) in one write, push their
        decisions, release the games and hand out the outcomes; a game whose append failed
        leaves the cache (a conflict: its answer is decided again on a fresh load).

        A snapshot due (an append crossing a multiple of `snapshot_every`) goes with its
        game's append (`Side.append_many`: in the append's script on Redis, stored only if
        the append is): the state is already advanced in place, the chain head sealed, so
        the snapshot is known before the append, and a script call of its own after it cost
        the client a whole command's work (4.4% of the worker's main thread)."""
        sealed: list[tuple[list[bytes], bytes]] = []
        appends: list[Appending] = []
        snapshots: list[Snapshot | None] | None = None
        every = self.snapshot_every
        for k, (_, hot, step) in enumerate(steps):  # (one pass: no pairs zipped again)
            records, head = sealed_step = hot.log.sealed(step.items)
            sealed.append(sealed_step)
            appends.append((hot.log.game, step.before, records, step.effects))
            if snapshot_due(step.before, step.before + len(records), every):
                if snapshots is None:
                    snapshots = [None] * len(steps)
                snapshots[k] = Snapshot(step.before + len(records), head, api.snapshot(hot.game))
        try:
            versions = await self.side.append_many(self.store, appends, snapshots)
        except BaseException as exc:
            versions = [exc] * len(steps)
        pushes: list[BotDecision] = []
        finishing: list[tuple[int, Hot, _Step]] = []
        retry: list[int] = []
        cancelled: BaseException | None = None
        people = bots = 0
        for (i, hot, step), (records, head), version in zip(steps, sealed, versions, strict=True):
            if isinstance(version, BaseException):
                self.evict(hot.log.game)  # the state ran ahead of a log that did not take it
                hot.lock.release()
                if isinstance(version, VersionConflict):
                    self.metrics.conflicts.inc()
                    retry.append(i)
                elif isinstance(version, Exception):
                    done(i, version)
                else:  # cancelled (shutdown): every game released, then stay cancelled
                    cancelled = version
                continue
            hot.log.wrote(version, head, records)
            pushes += step.effects.push
            if hot.people:
                people += 1
            else:
                bots += 1
            self._landed(hot, step)
            if step.over:
                finishing.append((i, hot, step))
                continue
            result = self._result(hot, step)
            hot.lock.free()
            done(i, result)
        self._count_tables(people, bots)
        if cancelled is not None:
            raise cancelled
        if pushes:
            await self.publish(self.sessions.push(pushes))
        for i, hot, step in finishing:
            outcome: Result | BaseException
            try:
                await self._finish_soon(hot)
                outcome = self._result(hot, step)
            except Exception as exc:  # noqa: BLE001 - the answer's outcome
                outcome = exc
            finally:
                hot.lock.release()
            done(i, outcome)
        if retry:  # another worker moved those games on: decided again on a fresh load
            await asyncio.gather(*(self._answer_alone(i, answers[i], done) for i in retry))

    # ---- the platform's end of a game ---------------------------------------------------------

    def _capped(self, hot: Hot, decisions: int, entries: int) -> Abandon | None:
        """The end the platform puts to a game that has made `decisions` decisions and whose
        log holds `entries` entries, if it is past either cap and its rules have not ended it
        (a runaway: random 谋攻 once ran to 500,000 entries in 16 minutes)."""
        if decisions < self.max_decisions and entries < self.max_log_entries or hot.game.over:
            return None  # (the caps first: every answer asks, and they are rarely reached)
        if decisions >= self.max_decisions:
            why = f"{decisions} decisions, the platform's cap (--max-decisions)"
            return Abandon(DECISION_LIMIT, why)
        why = f"{entries} log entries, the platform's cap (--max-log-entries)"
        return Abandon(LOG_LIMIT, why)

    def _abandoning(self, hot: Hot, end: Abandon) -> list[tuple[str, bytes]]:
        """End the cached game now (`api.abandon`: a draw, game_ended with the reason); the
        entries that say so, to append in the batch at hand."""
        events = api.abandon(hot.game, end.reason)
        log.warning("game %s ended by the platform: %s", hot.log.game, end.detail or end.reason)
        self.metrics.count("ended", end.reason)
        return [(ABANDON, encode_payload(end))] + [(EVENT, api.encode_event(e)) for e in events]

    async def abandon(self, game_id: str, end: Abandon) -> bool:
        """End a game that cannot go on (the watchdog's last resort for a game nobody moved):
        one `abandon` entry and its game_ended in the log, then finished and archived as any
        game is. False if it had ended already."""
        for _ in range(MAX_RETRIES):
            self.evict(game_id)  # decide on the log as it is now
            hot = await self.get(game_id)
            async with hot.lock:
                if self.cache.get(game_id) is not hot:
                    continue
                if hot.game.over or hot.finished:
                    return False
                d = api.pending(hot.game)
                items = self._abandoning(hot, end)
                for seq in range(hot.log.version + 1, hot.log.version + 1 + len(items)):
                    hot.positions.add(seq, None)
                answered = d.id if d is not None else None
                effects = self._effects(hot, hot.log.version + len(items), answered=answered)
                if not await self._append(hot, items, effects):
                    continue
                await self._finish_soon(hot)
                return True
        raise Refused("ABORTED", "the game kept changing; try again")

    async def _append(self, hot: Hot, items: list[tuple[str, bytes]], effects: Effects) -> bool:
        """Append entries the cached state has run ahead to, with their effects; False on a
        version conflict (another worker moved the game on: decide again on a fresh load).
        Either way but success the game leaves the cache."""
        try:
            await hot.log.append(items, self._write(hot.log.game, effects))
        except VersionConflict:
            self.metrics.conflicts.inc()
            self.evict(hot.log.game)
            return False
        except BaseException:
            self.evict(hot.log.game)
            raise
        return True

    async def recover(self, game_id: str) -> None:
        """Read a game again from its log and make sure it moves: its pending decision given a
        deadline if it has none (a bot's published again), or its finishing completed; the
        sweep's wait after a failure dropped (the watchdog, for a game that did not move)."""
        self.failing.pop(game_id, None)
        self.evict(game_id)
        hot = await self.get(game_id)
        await self._schedule(hot, only_new=True)

    async def drop_deadlines(self, game_id: str) -> None:
        """Forget every deadline of a game nothing can move (the watchdog gave up on it)."""
        self.failing.pop(game_id, None)
        for game, decision in await self.side.deadlines_of(game_id):
            await self.side.clear_deadline(game, decision)

    # ---- after an append ---------------------------------------------------------------------

    def _effects(
        self,
        hot: Hot,
        version: int,
        *,
        answered: int | None = None,
        repost: bool = False,
        now: int = 0,
        d: api.Decision | None = None,
    ) -> Effects:
        """What the log at `version` (the state as it is now) makes due: the pending decision's
        deadline and, for a bot seat, its decisions message; and the answered one's deadline
        dropped. `now`: the time they are due from (ms; 0: the clock's now); `d`: the pending
        decision, if the caller has it."""
        now = now or _now_ms()
        if d is None:
            d = api.pending(hot.game)
        if hot.game.over or d is None:
            # finishing (reveal, finished message, archive) is due too: written with the last
            # answer, so a worker killed or a Redis gone before the archive is written leaves a
            # deadline the sweep finishes the game by; `_finish` clears it once done
            clear = answered if answered != FINISHING else None  # the sweep's retry keeps it
            return Effects(clear=clear, deadline=(FINISHING, now + FINISH_AFTER_MS))
        bot = not hot.people or self._bot_seat(hot, d.seat)  # (`_bot`, without its calls)
        due = now + (self.bot_repost_ms if bot else hot.time_limit_ms)
        messages = (self._message(hot, d, version, repost, now),) if bot else ()
        hot.due = (d.id, due) if not bot else None
        # a person's seat stream reads what is pending beside the append (readside/decisions.py)
        mark = (
            mark_bytes(
                Mark(d.seat, d.kind, hot.game.current, hot.ids.opaque(d.id), 0 if bot else due)
            )
            if hot.people
            else b""
        )
        if messages and not repost and self.sessions.available:  # (reposts: the stream)
            return Effects(clear=answered, deadline=(d.id, due), push=messages, mark=mark)
        return Effects(clear=answered, deadline=(d.id, due), messages=messages, mark=mark)

    def _write(self, game_id: str, effects: Effects) -> Write:
        """The log's write for an append with `effects`: the append (with the effects, in one
        script on Redis), then the pushes to the bot sessions."""

        async def write(expected: int, records: list[bytes]) -> int:
            version = await self.side.append_with(self.store, game_id, expected, records, effects)
            if effects.push:
                await self.publish(self.sessions.push(effects.push))
            return version

        return write

    async def hand_back(self, session: Session) -> None:
        """End a bot session and publish the decisions it held unanswered. The publishing runs
        in a task of its own and ends even if the caller is cancelled meanwhile: a killed
        worker's call is cancelled (and its handler with it) while the hand-back is under way,
        and a hand-back cut off at its first await left the rest to their deadlines."""
        task = asyncio.create_task(self.publish(self.sessions.close(session)))
        self._handing.add(task)
        task.add_done_callback(self._handing.discard)
        await asyncio.shield(task)

    async def publish(self, messages: list[BotDecision]) -> None:
        """Publish bot decisions to `arena:decisions` (no session took them, or the session
        that held them ended). Redis failing here costs only time: each has its deadline,
        and the sweep publishes it again then."""
        for m in messages:
            try:
                await self.side.publish(m)
            except Exception as exc:  # noqa: BLE001 - the deadline stands for the message
                log.warning("bot decision of %s left to its deadline: %r", m.game, exc)

    @staticmethod
    def _bot(hot: Hot, d: api.Decision) -> bool:
        """Whether a bot answers `d`: a bot's seat, or a person's seat on 托管."""
        return Games._bot_seat(hot, d.seat)

    async def deadline_ms(self, hot: Hot, d: api.Decision) -> int:
        """When the server answers `d` by default (ms since the epoch; 0 if a bot answers it
        or no deadline is known)."""
        if self._bot(hot, d):
            return 0
        if hot.due is not None and hot.due[0] == d.id:
            return hot.due[1]
        return await self.side.deadline(hot.log.game, d.id) or 0

    def _message(
        self, hot: Hot, d: api.Decision, version: int, repost: bool = False, now: int = 0
    ) -> BotDecision:
        """The decisions message for a bot seat's decision. `player` names the bot
        (matchmaking seats bots as "bot:POLICY"), so the bot service can pick the seat's policy
        without reading the header first; `token` is a seat token for that seat alone (bot
        workers never hold the signing secret); `view` carries the seat's events it has not been
        sent yet, when the engine knows them (the read side's bot feed, readside/botfeed.py).
        Like every client, a bot worker sees the decision's opaque id and the seat's positions,
        never log versions."""
        seat = hot.header.seats[d.seat]
        opaque_id = hot.ids.opaque(d.id)
        # a seat on 托管 is played at the level its person chose, else its table's (`bot:LEVEL`)
        player = seat.player if seat.bot else hot.hosting.player(d.seat, HOSTED_PLAYER)
        # a policy that reads no view is sent none (and its seat has no feed to keep)
        view = (
            None
            if player in VIEWLESS_PLAYERS
            else hot.feed.view_for(d.seat, version, hot.positions)
        )
        return BotDecision(
            game=hot.log.game,
            decision=opaque_id,
            seat=d.seat,
            player=player,
            version=hot.positions.position(d.seat, version),
            body=_json_encode(_replace(d, id=opaque_id)),
            view=view,
            token=self._bot_token(hot, d.seat, now or _now_ms()),
            repost=repost,
            people=hot.people,
        )

    def _bot_token(self, hot: Hot, seat: int, now: int) -> str:
        """A short-lived token for a bot seat, reused until half its lifetime is gone (so the
        verifier's cache keeps hitting); a message reposted later carries a fresh one."""
        cached = hot.bot_tokens.get(seat)
        if cached is not None and now < cached[1]:
            return cached[0]
        ttl = self.bot_token_ttl_ms
        token = tokens.issue(self.secret, hot.log.game, seat, ttl, now_ms=now, bot=True)
        hot.bot_tokens[seat] = (token, now + ttl - ttl // 2)  # (reused while more than half left)
        return token

    async def _schedule(
        self, hot: Hot, *, answered: int | None = None, only_new: bool = False, repost: bool = False
    ) -> None:
        """Outside an append (a sweep, a repeated create): give the pending decision a deadline
        (with `only_new`, only if it has none, and then publish it to bots), or finish."""
        effects = self._effects(hot, hot.log.version, answered=answered, repost=repost)
        await apply_effects(self.side, hot.log.game, effects, only_new=only_new)
        if hot.game.over or api.pending(hot.game) is None:
            await self._finish(hot)

    async def _finish_soon(self, hot: Hot) -> None:
        """`_finish` right after the append that ended the game: an archive folder that cannot
        be written does not fail the request (the answer is in the log); the finishing
        deadline stands, and the sweep finishes the game once the folder takes files."""
        try:
            await self._finish(hot)
        except StorageUnwritable as exc:
            log.warning("game %s ended, not archived yet: %s", hot.log.game, exc)

    async def _finish(self, hot: Hot) -> None:
        """Seed reveal, arena:finished, archive. Safe to repeat (after a crash, say)."""
        game_id = hot.log.game
        self.sessions.forget(game_id)
        if not hot.finished:
            secret = await self.side.get_secret(game_id)
            if secret is None:
                raise Refused("INTERNAL", f"game {game_id!r} lost its seed")
            reveal = SeedReveal(
                seed=secret.seed,
                salt=secret.salt,
                ended_at_ms=_now_ms(),
                winners=list(hot.game.winners),
                sides=sorted({hot.game.players[s].role for s in hot.game.winners} - {""}),
            )
            hot.positions.add(hot.log.version + 1, None)
            try:
                await hot.log.finish(reveal)
            except VersionConflict:
                self.metrics.conflicts.inc()
                self.evict(game_id)
                return  # whoever appended will finish it; a sweep retries otherwise
            hot.finished = True
        await self.side.publish(GameFinished(game=game_id, winners=list(hot.game.winners)))
        if self.archive_dir is not None:
            try:
                self.archive_dir.mkdir(parents=True, exist_ok=True)
                # (the CRC of what this worker sealed spares the check of its own bytes)
                await archive_game(
                    self.store, game_id, self.archive_dir, sealed_crc=hot.log.sealed_crc
                )
            except OSError as exc:  # the folder, not Redis: said as what it is
                err = StorageUnwritable("archive folder", self.archive_dir, why_unwritable(exc))
                if self.storage is not None:
                    self.storage.archive_write_failed(err)
                raise err from exc
            if self.storage is not None:
                self.storage.archive_ok()
            await self.side.drop_secret(game_id)
            self.evict(game_id)
        await self.side.clear_deadline(game_id, FINISHING)

    async def sweep(self, limit: int = 50) -> int:
        """Handle due deadlines: default answers for silent humans and for bot seats nobody
        answered by their deadline, bot decisions re-published, games a dead worker left
        unfinished finished. A game that fails here is said once and tried again after
        `SWEEP_RETRY_MS`, so it holds up no other (the watchdog, watchdog.py, ends it if it
        never moves again); a Redis outage fails the whole round. Returns how many were
        handled."""
        now = _now_ms()
        waiting = {g for g, (_, at) in self.failing.items() if at > now}
        done = 0
        for game_id, decision in await self.side.due(now, limit + len(waiting)):
            if game_id in waiting:
                continue
            try:
                await self._sweep_one(game_id, decision)
            except Exception as exc:
                if is_outage(exc):
                    raise
                self._sweep_failed(game_id, exc, now)
            else:
                if self.failing.pop(game_id, None) is not None:
                    log.warning("deadline sweep: game %s goes on again", game_id)
            done += 1
        if now - self.counted_ms >= PENDING_EVERY_MS:  # (a gauge: not every sweep's round trip)
            self.counted_ms = now
            self.metrics.decisions_pending.set(await self.side.pending_count())
        return done

    def _sweep_failed(self, game_id: str, exc: Exception, now: int) -> None:
        first = self.failing.get(game_id, (now, 0))[0]
        if game_id not in self.failing:
            log.warning(
                "deadline sweep: game %s failed (%r); tried again every %d s",
                game_id,
                exc,
                SWEEP_RETRY_MS // 1000,
            )
        self.failing[game_id] = (first, now + SWEEP_RETRY_MS)
        self.metrics.count("sweep", "failed")

    async def _sweep_one(self, game_id: str, decision: int) -> None:
        self.evict(game_id)  # decide on the log as it is now
        try:
            hot = await self.get(game_id)
        except Refused:
            await self.side.clear_deadline(game_id, decision)
            return
        d = api.pending(hot.game)
        if d is None or hot.game.over or d.id != decision:
            await self._schedule(hot, answered=decision, only_new=True)
        elif self._bot(hot, d) and not await self._bot_overdue(hot):
            await self._schedule(hot, repost=True)  # publish again, later deadline
        else:
            # a silent person's seat, or a bot seat no bot answered by its deadline
            a = api.default_answer(d)
            # Refused: answered meanwhile; the next sweep looks again if still due
            with contextlib.suppress(Refused):
                await self._decide(game_id, d.seat, hot.ids.opaque(d.id), list(a.picks), auto=True)

    async def _bot_overdue(self, hot: Hot) -> bool:
        """Whether a bot seat's pending decision has waited past its deadline: the table's
        time per decision, plus a repost's grace, since the entry that made it pending was
        appended (Redis TIME). Then the server answers it by default, as for a silent
        person: with every bot worker gone or wedged a game still ends."""
        version = hot.log.version
        rows = await self.store.read_timed(hot.log.game, version - 1, version)
        at = rows[0][2] if rows else None
        return at is not None and _now_ms() - at >= hot.time_limit_ms + self.bot_repost_ms


def _game_id(game_id: str) -> str:
    try:
        return check_game_id(game_id)
    except ValueError as exc:
        raise Refused("INVALID_ARGUMENT", str(exc)) from None
