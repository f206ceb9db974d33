"""The shared streams and their messages: one typed msgspec Struct per stream.

| stream      | message        | written by                      | read by (consumer group)     |
|-------------|----------------|---------------------------------|------------------------------|
| `matches`   | `NewMatch`     | matchmaker, tournaments         | engine workers (`engine`)    |
| `decisions` | `BotDecision`  | engine workers (append outbox)  | bot workers (`bots`)         |
| `finished`  | `GameFinished` | engine workers                  | matchmaker (`ratings`); tournaments read it without a group |

A stream entry carries its message in one field, `m`, as msgpack (`encode`, `decode`): the
producer and the consumer import the same Struct, so they cannot drift apart, and a field added
later with a default still decodes older messages. Every stream key is named by `stream_key`
(the one place a later partitioning of the streams has to change).

Nothing here imports a service package; every service may import this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
    view: bytes | None = None  # the seat's unseen events (services/engine/feed.py), if known
    token: str = ""  # a short-lived seat token for `seat` alone (bot workers hold no secret)


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


def stream_key(namespace: str, name: str) -> str:
    """The Redis key of stream `name` (a SharedStream's name, or DEAD) in `namespace`."""
    return f"{namespace}:{name}"


_ENCODER = msgspec.msgpack.Encoder()
_DECODERS: dict[type[Any], msgspec.msgpack.Decoder[Any]] = {
    t: msgspec.msgpack.Decoder(t) for t in (NewMatch, BotDecision, GameFinished)
}


def encode(message: NewMatch | BotDecision | GameFinished) -> dict[bytes, bytes]:
    """The stream entry's fields for `message`."""
    return {FIELD: _ENCODER.encode(message)}


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
