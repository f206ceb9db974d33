"""Open tables: a table someone opens with their own settings, that others join from the lobby.

An open table is a mode of its own, made by its creator: its id (`t-<hex>`) names a queue like
a mode id does, its tickets are ordinary tickets (the same scripts enqueue, refresh, cancel and
seat them), and the matcher forms it like a mode whose policy is the creator's: the game starts
when the table is full, or with bots in the empty seats once the oldest ticket (the creator's)
has waited the table's bot wait. Ratings do not narrow who may sit down.

Redis (under the matchmaker's `{mm}` tag):
- `{ns}:{mm}:tb:TABLE` — hash: `settings` (JSON of TableSettings), creator, created, state
  (`open`, `started`, `closed`) and, once started, game.
- `{ns}:{mm}:tables` — the open tables by creation time.

A table with nobody waiting at it (its people left, or their tickets expired) is closed by the
next tick after a short grace, so the lobby does not list empty tables.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from ..contracts.levels import accepted, offered
from ..contracts.streams import OptionValue
from ..proto_gen.arena.v1 import matchmaker_pb2
from ..rules import api
from .modes import Mode, Policy

if TYPE_CHECKING:
    from .core import Matchmaker

TABLE_ID = re.compile(r"^t-[0-9a-f]{32}$")
MAX_NAME = 32
MAX_BOT_WAIT_MS = 10 * 60_000
MAX_TIME_LIMIT_MS = 2 * 60_000  # a person's decision never holds a table longer (issue 40)
MIN_TIME_LIMIT_MS = 2_000
MAX_HOSTED_AFTER = 20
MAX_UNHOSTED_LIMIT_MS = 60_000  # with hosted_after 0 (never 托管): each silent decision's wait
DEFAULT_TIME_LIMIT_MS = 60_000  # what 0 means (the engine's default, `arena engine`)
MAX_OPTIONS_JSON = 64 * 1024
MAX_PLAYERS = 64  # a bound for the decoder; each ruleset says its own sizes
EMPTY_GRACE_MS = 10_000  # an open table with nobody waiting is closed after this long
OPEN_ONLY = Policy(bot_after_ms=0, min_humans=1, window=1e9, widen_per_s=0.0, max_window=1e9)


def bot_levels() -> list[str]:
    """The levels a table's bots may play, the default first (services/contracts/levels.py)."""
    return offered()


def check_name(name: str) -> str:
    """A display name as it will be shown (as text, never markup): trimmed, 1–32 characters,
    no control or format characters. Raises ValueError with the reason."""
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise ValueError(f"a name has 1–{MAX_NAME} characters")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        raise ValueError("a name may not contain control characters")
    return name


class TableSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A table's settings, chosen by whoever opens it (matchmaker.proto TableSettings; the play
    API's body for a table)."""

    ruleset: str
    # the bounds are checked when a body is decoded (a 400 naming the field, never a 500 for
    # a number past what protobuf carries) and again by `checked`
    players: Annotated[int, msgspec.Meta(ge=1, le=MAX_PLAYERS)]
    options: dict[str, OptionValue] = {}  # ruleset options (GET /api/modes lists each table's)
    # bots take the empty seats after this wait; 0: only when the table is full
    bot_after_ms: Annotated[int, msgspec.Meta(ge=0, le=MAX_BOT_WAIT_MS)] = 20_000
    bot_level: str = ""  # the level of the bots, and of a person's seat on 托管 ("" = the first)
    # per decision of a person: 0 = the engine's default (60 s), else 2 s – 2 min
    time_limit_ms: Annotated[int, msgspec.Meta(ge=0, le=MAX_TIME_LIMIT_MS)] = 0
    # time-outs in a row before the seat goes on 托管; 0 = never (then each decision waits
    # at most 60 s: MAX_UNHOSTED_LIMIT_MS)
    hosted_after: Annotated[int, msgspec.Meta(ge=0, le=MAX_HOSTED_AFTER)] = 2

    def checked(self) -> TableSettings:
        """These settings if the engine can start such a game; ValueError (the reason) if not.
        An empty bot level becomes the first one the bot service serves."""
        try:  # the same checks the engine makes when the match arrives
            api.new_game(self.ruleset, self.players, 0, dict(self.options))
        except (api.UnknownOption, ValueError, TypeError, KeyError) as exc:
            raise ValueError(str(exc) or type(exc).__name__) from None
        if not 0 <= self.bot_after_ms <= MAX_BOT_WAIT_MS:
            raise ValueError(f"bot_after_ms must be 0–{MAX_BOT_WAIT_MS}")
        if self.time_limit_ms and not MIN_TIME_LIMIT_MS <= self.time_limit_ms <= MAX_TIME_LIMIT_MS:
            raise ValueError(
                f"time_limit_ms must be 0 (the default) or {MIN_TIME_LIMIT_MS}–{MAX_TIME_LIMIT_MS}"
            )
        if not 0 <= self.hosted_after <= MAX_HOSTED_AFTER:
            raise ValueError(f"hosted_after must be 0–{MAX_HOSTED_AFTER}")
        limit = self.time_limit_ms or DEFAULT_TIME_LIMIT_MS
        if self.hosted_after == 0 and limit > MAX_UNHOSTED_LIMIT_MS:
            raise ValueError(
                f"hosted_after 0 (never 托管) needs time_limit_ms of at most "
                f"{MAX_UNHOSTED_LIMIT_MS}: a silent seat would hold the table that long at "
                "every decision"
            )
        levels = bot_levels()
        level = self.bot_level or levels[0]
        if level not in accepted():
            raise ValueError(f"unknown bot level {level!r} (known: {', '.join(levels)})")
        return msgspec.structs.replace(self, bot_level=level)

    def mode(self, table: str) -> Mode:
        """The table as a mode of its own (see the module docstring)."""
        policy = replace(OPEN_ONLY, bot_after_ms=self.bot_after_ms, bot_policy=self.bot_level)
        return Mode(
            table,
            self.ruleset,
            self.players,
            dict(self.options),
            policy,
            time_limit_ms=self.time_limit_ms,
            hosted_after=self.hosted_after,
            hosted_level=self.bot_level,  # 托管 plays at the table's level, like its bots
        )


def settings_pb(s: TableSettings) -> matchmaker_pb2.TableSettings:
    """The settings as the proto message."""
    return matchmaker_pb2.TableSettings(
        ruleset=s.ruleset,
        players=s.players,
        options_json=json.dumps(s.options),
        bot_after_ms=s.bot_after_ms,
        bot_level=s.bot_level,
        time_limit_ms=s.time_limit_ms,
        hosted_after=s.hosted_after,
    )


def settings_of(m: matchmaker_pb2.TableSettings) -> TableSettings:
    """The settings of a proto message; ValueError if its options are not a JSON object."""
    if len(m.options_json) > MAX_OPTIONS_JSON:
        raise ValueError(f"options_json is longer than {MAX_OPTIONS_JSON} bytes")
    try:
        options = json.loads(m.options_json or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"options_json: {exc}") from None
    except RecursionError:  # nested past the decoder's depth (was INTERNAL)
        raise ValueError("options_json is nested too deeply") from None
    if not isinstance(options, dict):
        raise ValueError("options_json must be a JSON object")
    return TableSettings(
        ruleset=m.ruleset,
        players=m.players,
        options=options,
        bot_after_ms=m.bot_after_ms,
        bot_level=m.bot_level,
        time_limit_ms=m.time_limit_ms,
        hosted_after=m.hosted_after,
    )


@dataclass(frozen=True)
class OpenTable:
    """An open table as the lobby lists it."""

    table: str
    settings: TableSettings
    creator: str
    created_ms: int
    waiting: list[str]  # names of the people seated so far, in the order they came


def _stored(raw: Any) -> tuple[TableSettings, str, int, str] | None:
    """(settings, creator, created ms, state) of a table's stored hash, or None if none."""
    if not raw or b"settings" not in raw:
        return None
    settings = msgspec.json.decode(raw[b"settings"], type=TableSettings)
    return settings, raw[b"creator"].decode(), int(raw[b"created"]), raw[b"state"].decode()


class Tables:
    """Open tables over a Matchmaker's Redis keys and clock."""

    def __init__(self, mm: Matchmaker) -> None:
        self.mm = mm
        self.index = f"{mm.prefix}:tables"

    def _key(self, table: str) -> str:
        return f"{self.mm.prefix}:tb:{table}"

    async def create(self, creator: str, settings: TableSettings) -> str:
        """Store a new open table; its id. (The caller then enqueues the creator's ticket.)"""
        table, now = f"t-{uuid.uuid4().hex}", self.mm.clock.now_ms()
        async with self.mm.client.pipeline(transaction=True) as pipe:
            pipe.hset(
                self._key(table),
                mapping={
                    "settings": msgspec.json.encode(settings),
                    "creator": creator,
                    "created": now,
                    "state": "open",
                },
            )
            pipe.pexpire(self._key(table), self.mm.gc_ms)
            pipe.zadd(self.index, {table: now})
            await pipe.execute()
        return table

    async def get(self, table: str) -> tuple[TableSettings, str, int, str] | None:
        """(settings, creator, created ms, state) of a table, or None if unknown."""
        if not TABLE_ID.match(table):
            return None
        raw: Any = await self.mm.client.hgetall(self._key(table))
        return _stored(raw)

    async def open_mode(self, table: str) -> Mode:
        """The mode of an open table; raises LookupError (unknown) or ValueError (not open)."""
        found = await self.get(table)
        if found is None:
            raise LookupError(f"no table {table!r}")
        settings, _, _, state = found
        if state != "open":
            raise ValueError(f"table {table} has {state}")
        return settings.mode(table)

    async def open_modes(self) -> dict[str, Mode]:
        """Every open table as a mode (the tick forms them with the queues' modes)."""
        rows: Any = await self.mm.client.zrange(self.index, 0, -1)
        out: dict[str, Mode] = {}
        ids = [t.decode() for t in rows]
        async with self.mm.client.pipeline(transaction=False) as pipe:  # (one round trip)
            for table in ids:
                pipe.hgetall(self._key(table))
            raws: list[Any] = await pipe.execute() if ids else []
        for table, raw in zip(ids, raws, strict=True):
            found = _stored(raw) if TABLE_ID.match(table) else None
            if found is None or found[3] != "open":
                await self.mm.client.zrem(self.index, table)  # expired or ended: unlist it
                continue
            out[table] = found[0].mode(table)
        return out

    async def started(self, table: str, game: str) -> None:
        """The table's game has been published: it is no longer open."""
        async with self.mm.client.pipeline(transaction=False) as pipe:  # (one round trip)
            pipe.hset(self._key(table), mapping={"state": "started", "game": game})
            pipe.zrem(self.index, table)
            await pipe.execute()

    async def close_if_empty(self, table: str, waiting: int) -> bool:
        """Close an open table nobody waits at (after the grace); whether it was closed."""
        if waiting:
            return False
        found = await self.get(table)
        if found is None or self.mm.clock.now_ms() - found[2] < EMPTY_GRACE_MS:
            return False
        await self.close(table)
        return True

    async def close(self, table: str) -> None:
        """Close a table: nobody may join it any more."""
        await self.mm.client.hset(self._key(table), "state", "closed")
        await self.mm.client.zrem(self.index, table)

    async def listing(self, limit: int = 100, *, newest: bool = False) -> list[OpenTable]:
        """The open tables, oldest first (`newest`: newest first: the lobby's order, where a
        new table is never hidden behind old ones), with the names of who waits at each."""
        rows: Any = await (self.mm.client.zrevrange if newest else self.mm.client.zrange)(
            self.index, 0, max(0, limit - 1)
        )
        out = []
        for table in [t.decode() for t in rows]:
            found = await self.one(table)
            if found is not None:
                out.append(found)
        return out

    async def one(self, table: str) -> OpenTable | None:
        """One open table as `listing` shows it (None if it is not open). CreateTable answers
        with its own table from here: it listed all of them (a few round trips each, one after
        another) to pick out its own, and with a hundred people opening tables at once that
        took 0.8 s at the median, up to 4.3 s of the play API's 5 s deadline (issue 44)."""
        found = await self.get(table)
        if found is None or found[3] != "open":
            return None
        settings, creator, created, _ = found
        queued: Any = await self.mm.client.zrange(f"{self.mm.prefix}:w:{table}", 0, -1)
        names = []
        for t in queued:
            name: Any = await self.mm.client.hget(f"{self.mm.prefix}:t:{t.decode()}", "name")
            names.append(name.decode() if name else "")
        return OpenTable(table, settings, creator, created, names)
