"""The one envelope, typed: what entries.py writes, as msgspec structs a reader decodes with
(`decode`) and a document publishes as JSON Schema (`json_schema`: the play API's OpenAPI
document and proto/arena/v1/entries.schema.json are generated from these).

An envelope is one of seven shapes, told apart by ``kind``; ``seq`` is the viewer's position.
The writer (entries.py) formats the bytes itself, for speed; tests/readside checks that what it
writes decodes to these types for every entry of every ruleset's games.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import msgspec

from ..rules import api

if TYPE_CHECKING:
    EventPayload = api.Event
else:  # every event type the rules can log, tagged by `type` (the rulesets' own included)
    EventPayload = Union[tuple(cls for _, cls in sorted(api.event_types().items()))]  # noqa: UP007


class SeatOfHeader(msgspec.Struct, kw_only=True):
    """Who sits in a seat: the player id (bots' too), whether a bot plays it, the chosen name."""

    player: str
    bot: bool
    name: str = ""


class HeaderBody(msgspec.Struct, kw_only=True):
    """The game's first entry: ruleset, seats, options and the commitment to the seed (hex)."""

    game_id: str
    ruleset: str
    players: int
    rules_version: str
    seats: list[SeatOfHeader]
    seed_commitment: str
    commitment_scheme: str
    options: dict[str, Any]
    started_at_ms: int


class AnswerBody(msgspec.Struct, kw_only=True):
    """An answer, to the seat that gave it: the decision's opaque id (absent when the server
    holds no key for them; the god view gets the log's own decision number), the picks, and
    whether the server gave it for a silent seat."""

    seat: int
    picks: list[str]
    auto: bool = False
    decision: int | None = None


class RevealBody(msgspec.Struct, kw_only=True):
    """The last entry: the seed and salt that open the header's commitment, the outcome."""

    seed: int
    salt: str
    ended_at_ms: int
    winners: list[int]
    sides: list[str]


class ControlBody(msgspec.Struct, kw_only=True):
    """Who plays a person's seat from here on: ``hosted`` (托管: its bot) or the person again;
    ``reason`` timeouts, asked, resigned or taken_back; ``level`` the bot level the person chose
    for the seat's 托管 (absent: the table's)."""

    seat: int
    hosted: bool
    reason: str
    level: str = ""


class AbandonBody(msgspec.Struct, kw_only=True):
    """The platform ended the game before its rules did: ``reason`` decision_limit, log_limit
    (the platform's caps on a game) or stalled (nobody could move it), ``detail`` in words."""

    reason: str
    detail: str = ""


class HeaderEntry(msgspec.Struct, kw_only=True, tag="header", tag_field="kind"):
    """`header`: public."""

    seq: int
    header: HeaderBody


class EventEntry(msgspec.Struct, kw_only=True, tag="event", tag_field="kind"):
    """`event`: an event redacted for the viewer (proto/arena/v1/events.schema.json)."""

    seq: int
    event: EventPayload


class AnswerEntry(msgspec.Struct, kw_only=True, tag="answer", tag_field="kind"):
    """`answer`: only to the seat that answered (and the god view)."""

    seq: int
    answer: AnswerBody


class RevealEntry(msgspec.Struct, kw_only=True, tag="seed_reveal", tag_field="kind"):
    """`seed_reveal`: public, the last entry of a finished game."""

    seq: int
    reveal: RevealBody


class ControlEntry(msgspec.Struct, kw_only=True, tag="control", tag_field="kind"):
    """`control`: public, a person's seat goes on 托管 or comes back."""

    seq: int
    control: ControlBody


class AbandonEntry(msgspec.Struct, kw_only=True, tag="abandon", tag_field="kind"):
    """`abandon`: public, the platform ended the game (its game_ended, a draw, follows)."""

    seq: int
    abandon: AbandonBody


class OtherEntry(msgspec.Struct, kw_only=True, tag="other", tag_field="kind"):
    """`other`: an entry of a kind this server does not know (`type` names it); a reader steps
    over it."""

    seq: int
    type: str


Envelope = Union[  # noqa: UP007
    HeaderEntry, EventEntry, AnswerEntry, RevealEntry, ControlEntry, AbandonEntry, OtherEntry
]
"""One log entry as a viewer receives it (entries.py)."""
ENTRY_TYPES: tuple[type[msgspec.Struct], ...] = (
    HeaderEntry,
    EventEntry,
    AnswerEntry,
    RevealEntry,
    ControlEntry,
    AbandonEntry,
    OtherEntry,
)
"""The shapes of `Envelope`, one per ``kind``."""

_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(Envelope)


def decode(data: bytes | str) -> Envelope:
    """An envelope from its JSON; raises msgspec.DecodeError / ValidationError."""
    out: Envelope = _decoder.decode(data)
    return out


def json_schema(ref_template: str = "#/$defs/{name}") -> tuple[dict[str, Any], dict[str, Any]]:
    """(the envelope's schema, the definitions it refers to), as msgspec writes them."""
    (schema,), defs = msgspec.json.schema_components([Envelope], ref_template=ref_template)
    return schema, defs
