"""The shared streams and their messages: one typed msgspec Struct per stream.

| stream      | message        | written by                      | read by (consumer group)     |
|-------------|----------------|---------------------------------|------------------------------|
| `matches`   | `NewMatch`     | matchmaker, tournaments         | engine workers (`engine`)    |
| `decisions` | `BotDecision`  | engine workers (append outbox)  | bot workers (`bots`)         |
| `finished`  | `GameFinished` | engine workers                  | matchmaker (`ratings`); tournaments read it without a group |

A stream entry carries its message in one field, `m`, as msgpack (`encode`, `decode`): the
producer and the consumer import the same Struct, so they cannot drift apart, and a field added
later with a default still decodes older messages.

## Partitions: the Redis key layout (the one place keys are named)

The shared streams are split into P partitions (`ARENA_PARTITIONS`, default 16; 1 works too) so
that the platform runs on a Redis Cluster: a game belongs to partition `partition_of(game)`
(CRC-32 of its id mod P), and every key of the game and every stream its scripts write carry
that partition's hash tag, so one script touches one slot:

    {ns}:{TAG}:g:GAME:log | :snap | :secret   the game's log, snapshot, secret (`game_key`)
    {ns}:{TAG}:decisions | :finished          the partition's shared streams (`stream_key`)
    {ns}:{TAG}:matches                        matches of the partition's games (tournaments)
    {ns}:{TAG}:deadlines                      the partition's decision deadlines (`partition_key`)
    {ns}:{mm}:matches                         matches the matchmaker forms: published by its
                                              atomic FORM script, which must stay in `{mm}`
    {ns}:dead, {ns}:partitions                dead letters; the P every service must agree on

TAG is `partition_tag(p, P)`: a short string whose hash slot lies in the p-th of P equal slices
of the 16384 slots, so however a cluster splits the slots into ranges, partitions spread evenly
over its masters. The matches stream need not share the game's slot (creating a game is
idempotent and separate from the ack); the decisions and finished streams and the deadlines
must, because the append script writes them with the log. Consumers read every partition
(`stream_keys`). The same layout runs on one Redis (P partitions on one node).

Nothing here imports a service package; every service may import this module.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

import msgspec

FIELD = b"m"
"""The one field of a shared-stream entry: the message, msgpack."""

LEGACY_MATCH_FIELD = b"match"
"""Before typed messages a match was JSON in field `match`; still read (a hand-written
`XADD arena:matches * match '{...}'` keeps working), never written."""


class BadMessage(ValueError):
    """A stream entry that does not hold the message its stream carries."""


OptionValue = bool | int | float | str | None
"""A ruleset option's value: every ruleset option is a plain value, and a message or request
that nests more is refused when it is decoded (a deep document never reaches the decoder's
recursion limit)."""


class Seat(msgspec.Struct, frozen=True):
    """Who sits in a seat: a player id, whether a bot plays it, and the name the person chose
    (any text, shown as text; "" = show the player id)."""

    player: str
    bot: bool = False
    name: str = ""


class NewMatch(msgspec.Struct, frozen=True, kw_only=True):
    """`matches`: a table to start. The game id is the match id; creating it is idempotent, so
    publishing the same match again is a no-op for a game that exists."""

    match_id: str
    ruleset: str
    seats: list[Seat]
    options: dict[str, OptionValue] = {}
    time_limit_ms: int = 0  # per human decision; 0: the engine's default
    hosted_after: int = 0  # time-outs in a row that put a person's seat on 托管; 0 = never
    hosted_level: str = ""  # the bot level that plays a seat on 托管 ("": the engine's default)
    seed: int | None = None  # None: the engine draws one
    mode: str = ""  # the matchmaker's mode id, when it formed the table
    tokens: dict[int, str] = {}  # the matchmaker's seat tokens of the human seats, by seat


class BotDecision(msgspec.Struct, frozen=True, kw_only=True):
    """`decisions`: a decision pending for a bot seat, published in the same script that
    appended the entries before it (so it exists exactly when they are in the log)."""

    game: str
    decision: int  # the decision's opaque id (= body's id; contracts/decision_ids.py)
    seat: int  # the seat asked (= body's seat)
    player: str  # the seat's player id: "bot:POLICY" names the policy to play it
    version: int  # the seat's position the decision is pending at (eventlog/positions.py)
    body: bytes  # the decision as JSON (services.rules.api.Decision)
    view: bytes | None = None  # the seat's unseen events (services/readside/botfeed.py), if known
    token: str = ""  # a short-lived seat token for `seat` alone (bot workers hold no secret)
    repost: bool = False  # published again by a deadline sweep: still pending after its time
    # a person (a play API client) sits at the table: its answers go to the people's engines
    # when there are any (`--people-engine`), apart from the bot-only games' (issue 44)
    people: bool = False


VIEWLESS_PLAYERS = frozenset({"bot:random"})
"""Bot seats whose policy reads no view (services/bots/seats.py `VIEWLESS`, by the player id
that names the policy): the engine keeps no feed for them and their messages carry no `view`."""


class GameFinished(msgspec.Struct, frozen=True, kw_only=True):
    """`finished`: a game ended (its seed is revealed; the archive follows)."""

    game: str
    winners: list[int] = []


M = TypeVar("M", NewMatch, BotDecision, GameFinished)


@dataclass(frozen=True)
class SharedStream(Generic[M]):
    """A shared stream: its name (see `stream_key`), its message and the groups reading it."""

    name: str
    message: type[M]
    groups: tuple[str, ...]


MATCHES = SharedStream("matches", NewMatch, ("engine",))
DECISIONS = SharedStream("decisions", BotDecision, ("bots",))
FINISHED = SharedStream("finished", GameFinished, ("ratings",))
SHARED = (MATCHES, DECISIONS, FINISHED)
DEAD = "dead"
"""The dead-letter stream: messages no consumer could handle, with the reason."""


def stream_of(message: NewMatch | BotDecision | GameFinished) -> SharedStream[Any]:
    """The shared stream that carries `message`."""
    return next(s for s in SHARED if isinstance(message, s.message))


def game_of(message: NewMatch | BotDecision | GameFinished) -> str:
    """The game `message` is about (its partition is the stream's partition)."""
    return message.match_id if isinstance(message, NewMatch) else message.game


PARTITIONS_ENV = "ARENA_PARTITIONS"
DEFAULT_PARTITIONS = 16
MAX_PARTITIONS = 1024
MATCHMAKER_TAG = "mm"
"""The matchmaker's hash tag: its tickets, and the matches stream its FORM script writes."""
SLOTS = 16384  # Redis Cluster's hash slots


class BadLayout(ValueError):
    """A partition count that is not a whole number in 1..MAX_PARTITIONS."""


def partitions() -> int:
    """P, the number of partitions: `ARENA_PARTITIONS` from the environment, else 16.

    Every process of a deployment must use the same P (`arena up` passes its environment on;
    services also check it against the `{ns}:partitions` key at start-up)."""
    raw = os.environ.get("ARENA_PARTITIONS", "")  # = PARTITIONS_ENV
    return check_partitions(raw) if raw else DEFAULT_PARTITIONS


def check_partitions(value: str | int) -> int:
    """`value` as a partition count; BadLayout if it is not one."""
    try:
        n = int(value)
    except ValueError:
        raise BadLayout(
            f"{PARTITIONS_ENV}={value!r}: want a whole number 1..{MAX_PARTITIONS}"
        ) from None
    if not 1 <= n <= MAX_PARTITIONS:
        raise BadLayout(f"{n} partitions: want 1..{MAX_PARTITIONS}")
    return n


def _crc16(data: bytes) -> int:
    """CRC-16/XMODEM, Redis Cluster's key hash."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def slot_of(tag: str) -> int:
    """The cluster hash slot of keys tagged `{tag}`."""
    return _crc16(tag.encode()) % SLOTS


@lru_cache(maxsize=4096)
def partition_tag(partition: int, count: int) -> str:
    """The hash tag of `partition` of `count`: `pN` (or `pN.J`, the first J) whose slot lies in
    the partition's slice of the slot space."""
    if not 0 <= partition < count:
        raise BadLayout(f"no partition {partition} of {count}")
    lo, hi = partition * SLOTS // count, (partition + 1) * SLOTS // count
    if lo <= slot_of(f"p{partition}") < hi:
        return f"p{partition}"
    j = 0
    while not lo <= slot_of(f"p{partition}.{j}") < hi:
        j += 1
    return f"p{partition}.{j}"


def partition_of(game: str, count: int | None = None) -> int:
    """The partition game `game` belongs to (of `count`, default `partitions()`)."""
    return zlib.crc32(game.encode()) % (partitions() if count is None else count)


def partition_key(namespace: str, partition: int | str, name: str) -> str:
    """The key `name` of a partition (an index, or a literal tag such as MATCHMAKER_TAG)."""
    tag = partition if isinstance(partition, str) else partition_tag(partition, partitions())
    return f"{namespace}:{{{tag}}}:{name}"


def stream_key(namespace: str, name: str, partition: int | str | None = None) -> str:
    """The Redis key of stream `name` (a SharedStream's name, or DEAD) in `namespace`: of one
    partition, or unpartitioned (`partition` None: DEAD, and the layout before partitions)."""
    if partition is None:
        return f"{namespace}:{name}"
    return partition_key(namespace, partition, name)


def game_stream_key(namespace: str, name: str, game: str) -> str:
    """The key of stream `name` in the partition of `game`."""
    return partition_key(namespace, partition_of(game), name)


def stream_keys(namespace: str, name: str) -> list[str]:
    """Every partition's key of stream `name` (for MATCHES also the matchmaker's): what a
    consumer reads."""
    keys = [partition_key(namespace, p, name) for p in range(partitions())]
    if name == MATCHES.name:
        keys.append(partition_key(namespace, MATCHMAKER_TAG, name))
    return keys


# Game ids become part of Redis keys inside a hash tag, so braces (and anything that would need
# quoting in a file name or a URL) are refused up front rather than producing a key in the wrong
# cluster slot or an archive file name that cannot be written.
_GAME_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,100}$")


def check_game_id(game: str) -> str:
    """Return `game` if it is a valid game id, else raise ValueError."""
    if not _GAME_ID.match(game):
        raise ValueError(f"invalid game id {game!r}: use letters, digits, '_', '-', '.'")
    return game


def game_key(namespace: str, game: str, kind: str) -> str:
    """The key `kind` (`log`, `snap`, `secret`) of `game` (a checked game id), in its
    partition's slot."""
    return partition_key(namespace, partition_of(game), f"g:{game}:{kind}")


class Layout:
    """The keys of one namespace, for the services that name keys on every answer: the same
    keys as `game_key` and `game_stream_key`, with the partition count read once (when the
    layout is made; `partitions()` reads the environment at every call) and each game's hash
    tag remembered (the newest few thousand games)."""

    MAX_GAMES = 8192

    def __init__(self, namespace: str, count: int | None = None) -> None:
        self.namespace = namespace
        self.count = partitions() if count is None else check_partitions(count)
        self._tags: dict[str, str] = {}

    def tag(self, game: str) -> str:
        """The hash tag of the partition of `game`."""
        tag = self._tags.get(game)
        if tag is None:
            if len(self._tags) >= self.MAX_GAMES:
                self._tags.clear()
            tag = partition_tag(partition_of(game, self.count), self.count)
            self._tags[game] = tag
        return tag

    def game_key(self, game: str, kind: str) -> str:
        """See `game_key`."""
        return f"{self.namespace}:{{{self.tag(game)}}}:g:{game}:{kind}"

    def game_stream_key(self, name: str, game: str) -> str:
        """See `game_stream_key`."""
        return f"{self.namespace}:{{{self.tag(game)}}}:{name}"


def legacy_game_key(namespace: str, game: str, kind: str) -> str:
    """A game's key in the layout before partitions (`arena migrate` moves them)."""
    return f"{namespace}:{{{game}}}:{kind}"


_ENCODER = msgspec.msgpack.Encoder()
_DECODERS: dict[type[Any], msgspec.msgpack.Decoder[Any]] = {
    t: msgspec.msgpack.Decoder(t) for t in (NewMatch, BotDecision, GameFinished)
}


def encode(message: NewMatch | BotDecision | GameFinished) -> dict[bytes, bytes]:
    """The stream entry's fields for `message`."""
    return {FIELD: _ENCODER.encode(message)}


encode_message: Callable[[NewMatch | BotDecision | GameFinished], bytes] = _ENCODER.encode
"""The stream entry's one field (`encode(message)[FIELD]`), without the dict: what a bot
session carries per decision."""


def decode(fields: Mapping[bytes, bytes], kind: type[M]) -> M:
    """The message of type `kind` in a stream entry's fields; BadMessage if there is none."""
    data = fields.get(FIELD)
    try:
        if data is None and kind is NewMatch and LEGACY_MATCH_FIELD in fields:
            legacy: M = msgspec.json.decode(fields[LEGACY_MATCH_FIELD], type=kind)
            return legacy
        if data is None:
            raise BadMessage(f"no {kind.__name__} in the entry (no field {FIELD.decode()!r})")
        message: M = _DECODERS[kind].decode(data)
        return message
    except msgspec.MsgspecError as exc:
        raise BadMessage(f"not a {kind.__name__}: {exc}") from None
