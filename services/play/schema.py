"""The play API's bodies, typed once: requests are decoded into these structs (a malformed body is
a 400 naming the field) and responses encoded from them; the OpenAPI document (openapi.py) is
generated from the same structs, so the document cannot drift from what the server does."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from ..eventlog.checks import Divergence as Divergence
from ..eventlog.checks import VerifyReport as VerifyReport

# the play API's body for a table is the matchmaker's own settings struct
from ..matchmaking.tables import TableSettings as TableSettings
from ..readside import schema as readside_schema
from ..replay.games import GameSummary as GameSummary

DecisionId = Annotated[int, msgspec.Meta(ge=0, le=(1 << 53) - 1)]
"""A decision's opaque id as a seat is shown it (contracts/decision_ids.py: 53 bits, so it
survives JSON in a browser): a number past it is a 400, not an overflow of the engine's int64."""

Lang = Literal["zh", "en"]
"""The languages of the words a player reads (prompts and option labels): 中文 or English."""


class Error(msgspec.Struct):
    """Every error response: what was wrong, in words (the request changed nothing)."""

    error: str


class NewGuest(msgspec.Struct, forbid_unknown_fields=True):
    """Sit down as a guest: the name shown to the other players (as text, never markup)."""

    name: str


class Player(msgspec.Struct, kw_only=True):
    """Who the credential belongs to."""

    player: str  # the player id (seats and ratings use it)
    name: str


class Guest(msgspec.Struct, kw_only=True):
    """A new guest identity. `token` is the credential for clients that are not browsers
    (`Authorization: Bearer TOKEN`); a browser gets it as an HttpOnly cookie as well."""

    player: str
    name: str
    token: str


class OpenTable(msgspec.Struct, kw_only=True):
    """A table waiting for players."""

    table: str
    settings: TableSettings
    creator: str
    created_ms: int
    waiting: list[str]  # the names of the people seated so far


class Tables(msgspec.Struct):
    """A page of the open tables: newest first, those with a free seat before full ones."""

    tables: list[OpenTable]


class ModeTable(msgspec.Struct, kw_only=True):
    """A table size a ruleset seats, and the options that select it."""

    ruleset: str
    players: int
    options: dict[str, Any]


class ModeOption(msgspec.Struct, kw_only=True):
    """An option a table may set (services/rules/README.md "Ruleset options"): its default and
    the values it allows, in words (`false, true`, `an integer in 0..10000`)."""

    default: Any
    allowed: str


class Preset(msgspec.Struct, kw_only=True):
    """A named set of options a table of a ruleset is usually opened with (谋攻, a draft of
    generals …): `names` by language (`zh`, `en`), the options it sets (on top of the table
    size's own)."""

    id: str
    names: dict[str, str]
    options: dict[str, Any]


class Modes(msgspec.Struct, kw_only=True):
    """What a table may be: every ruleset's table sizes, and the bots' levels (the first is the
    default; a table's level plays its bot seats and any seat on 托管); the names each ruleset
    prints differently from the engine (红楼梦: 桃 -> 药, lord -> 主人); the options a table of
    each ruleset may set, with their defaults (`max_reshuffles`: 19, every game ends in a draw
    when its draw pile would be reshuffled for the 20th time; 0 = unlimited); the presets of
    each ruleset (the first is the usual one); and the table a page opens by default
    (`default`: standard identity, 5 players)."""

    tables: list[ModeTable]
    bot_levels: list[str]
    names: dict[str, dict[str, str]] = {}
    options: dict[str, dict[str, ModeOption]] = {}
    presets: dict[str, list[Preset]] = {}
    default: ModeTable | None = None


class Waiting(msgspec.Struct, kw_only=True):
    """Where the person waits: the table and the ticket."""

    table: str
    ticket: str
    players: int
    enqueued_ms: int


class Seated(msgspec.Struct, kw_only=True):
    """The person's seat: which game and seat, whether that game is over, and whether the seat
    is alive (a dead seat's person may watch the rest from it, or leave it: `resign`; either
    way they are free to sit at another table)."""

    game: str
    seat: int
    over: bool = False
    alive: bool = True


class Me(msgspec.Struct, kw_only=True):
    """Who the credential belongs to and where they are: waiting at a table, seated, or
    neither."""

    player: str
    name: str
    waiting: Waiting | None = None
    seated: Seated | None = None


class Status(msgspec.Struct, kw_only=True):
    """One update of `GET /api/me/stream` (`event: status`)."""

    state: Literal["idle", "waiting", "seated"]
    waiting: Waiting | None = None
    waited_ms: int = 0
    seated: Seated | None = None


class Joined(msgspec.Struct, kw_only=True):
    """A table joined (or opened): where the person now waits."""

    table: str
    waiting: Waiting


class QuickPlay(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Sit at an open table with these settings (ruleset, size and options the same), or open
    one with them."""

    settings: TableSettings


class Option(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One legal pick, labelled. `type` says what it names: `card` (a card id: in the seat's
    hand or equipment, or shown for this decision), `seat`, `skill`, `general`, `suit`, `hand`
    (a random hand card of another seat), `recast` (重铸 a card) or `word` (a named choice).
    `about`: what a player may want to read before picking it (a general's skills and their
    text, a skill's text), in the rules' own words; "" when there is nothing more."""

    key: str  # what to send in `picks`
    type: str
    text: str  # the label, in a player's words (the language asked for: `lang`)
    card: int = -1
    seat: int = -1
    about: str = ""


class Decision(msgspec.Struct, kw_only=True):
    """A decision pending for the seat: pick between `min` and `max` of `options` (their keys,
    in order where order matters: 观星 puts the cards named on top in that order), or decline
    with no picks when `declinable`. `deadline_ms`: when the server answers by default (0: the
    seat's bot answers it, the seat being on 托管). `id` is opaque (send it back with the
    answer; ids are not in order and say nothing of other seats' decisions); `version` is the
    seat's position the decision belongs to (see `SeatView`)."""

    id: int
    seat: int
    kind: str
    prompt: str
    options: list[Option]
    min: int
    max: int
    declinable: bool
    ordered: bool
    info: dict[str, Any]
    version: int
    deadline_ms: int


class Waits(msgspec.Struct, kw_only=True):
    """A decision pending for another seat, where the seat may know of it (the public kinds:
    the active seat playing, discarding or choosing targets; a draft)."""

    seat: int
    kind: str
    version: int


class SeatMessage(msgspec.Struct, kw_only=True):
    """`event: decision` of the seat's stream: what is pending for the seat changed, as of its
    position `version`: its own decision (`decision`, with labelled options) or another seat's
    public one (`waits`), or neither (both null: nothing the seat may know of is pending, or
    the game is over); `now_ms` is the server's clock, for counting down to a deadline."""

    version: int
    decision: Decision | None
    waits: Waits | None
    now_ms: int


ENTRY_TYPES = readside_schema.ENTRY_TYPES
"""`data:` of the seat stream's entries (and of GET /api/games/{game}/events): the one envelope
of services/readside, a tagged union by `kind` (`HeaderEntry`, `EventEntry`, `AnswerEntry`,
`RevealEntry`, `ControlEntry`, `OtherEntry`)."""
STREAM_TYPES: tuple[type[msgspec.Struct], ...] = (SeatMessage, *ENTRY_TYPES)
"""Every body the seat stream sends, for the OpenAPI document's components."""


class SeatState(msgspec.Struct, kw_only=True):
    """One seat as a viewer knows it (the rules' views.SeatView): general, role once known,
    HP, alive, hand count (and the hand faces the viewer has seen: all of its own), equipment
    and judgement cards (card ids), chained, counters (护甲 armor, 玉佩 jade, 怒气 rage)."""

    seat: int
    general: str = ""
    role: str = ""
    hp: int = 0
    max_hp: int = 0
    alive: bool = True
    hand_count: int = 0
    hand: list[int] = []
    equip: list[int] = []
    judge: list[int] = []
    chained: bool = False
    counters: dict[str, int] = {}


class TableView(msgspec.Struct, kw_only=True):
    """A viewer's picture of the table (the rules' views.View), folded from the entries it
    received: every seat, the draw pile's size, the discard pile (card ids, oldest first),
    whose turn (`current`, -1 before the first) in which phase of which round, and the end
    (`over`, `winners`: seats). `seq` counts the events folded. Card ids name cards of the
    game's catalogue (`GET /api/games/{game}/catalogue`)."""

    viewer: int
    ruleset: str = ""
    seats: list[SeatState] = []
    draw_count: int = 0
    discard: list[int] = []
    current: int = -1
    phase: str = ""
    round: int = 0
    over: bool = False
    winners: list[int] = []
    seq: int = 0


class SeatView(msgspec.Struct, kw_only=True):
    """The seat's picture of the game now: the view folded from every entry the seat may see
    (services.rules views: own hand, role and general; every seat's public state), its pending
    decision (with options), whether its bot plays it (托管). `version` is the seat's position:
    how many entries it has received (its entries are numbered 1, 2, 3, … with no gaps, so the
    count says nothing of what went to the other seats)."""

    game: str
    seat: int
    version: int
    over: bool
    hosted: bool
    view: TableView
    decision: Decision | None = None
    waits: Waits | None = None
    now_ms: int = 0  # the server's clock, for counting down to a deadline


class Answer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """An answer to the pending decision: its id and the picked option keys (none declines)."""

    decision: DecisionId
    picks: list[str] = []


class Answered(msgspec.Struct, kw_only=True):
    """The answer as the game took it: `duplicate` if that decision had been answered already
    by this seat (the first answer stands), the seat's position after it, whether the game is
    over."""

    decision: int
    duplicate: bool
    version: int
    over: bool


class Hosting(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """托管: true = let the seat's bot play, false = take the seat back. `level`: the bot level
    that plays the seat on 托管, the person's own choice (one of /api/modes `bot_levels`; sent
    while on 托管, it changes the level); "" or absent: the level chosen before for this seat
    (the person's default, `PersonSettings`, unless they chose another for it), else the
    table's. A chosen level holds for the seat's later 托管 too (time-outs, resign)."""

    hosted: bool
    level: Annotated[str, msgspec.Meta(max_length=32)] = ""


class PersonSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The signed-in person's own settings, kept on the server with their account (every
    device sees them). `hosted_level`: the bot level that plays their seats on 托管 unless
    they choose another for a seat (one of /api/modes `bot_levels`; "": none, the table's).
    It is recorded for each seat they sit at when the server opens it (their page following
    the seat), so time-outs and a resignation play at it too, and set while they sit at a live
    game it applies to that seat at once; cleared, their current seat keeps its level."""

    hosted_level: Annotated[str, msgspec.Meta(max_length=32)]


class Hosted(msgspec.Struct, kw_only=True):
    """Whether the seat's bot plays it now, and the seat's position after the request."""

    hosted: bool
    version: int


# ---- the spectators' and replays' routes (served by the replay server: services/replay) ------

CardRow = tuple[str, str, int, str, str]
"""A card of a game's table: [name, suit (S H C D, "" none), rank (1-13, 0 none), type, subtype]."""


class GameList(msgspec.Struct, kw_only=True):
    """Live and finished games, newest first (`GET /api/games`)."""

    games: list[GameSummary]


class GameInfo(msgspec.Struct, kw_only=True):
    """A game: its header (ruleset, seats, options, the commitment to its seed), whether it is
    over, how many entries a spectator has been sent (`version`), its card table (`cards`, by
    card id), the names its ruleset prints differently (`names`) and every card's English name
    (`english`: what an English page shows; generals and skills keep their Chinese names)."""

    header: readside_schema.HeaderBody
    over: bool
    version: int
    cards: list[CardRow]
    names: dict[str, str]
    english: dict[str, str] = {}


class EventsPage(msgspec.Struct, kw_only=True):
    """A game's entries as the viewer may see them (`viewer`: -1 a spectator, -2 every hand,
    else a seat), from position `from` up to `upto` (the viewer's positions), held the
    viewer's `delay_ms` behind a live game."""

    game: str
    viewer: int
    delay_ms: int
    upto: int
    over: bool
    entries: list[readside_schema.Envelope]


class PlatformKey(msgspec.Struct, kw_only=True):
    """The key the platform signs its archives with (`arena verify --key`)."""

    algorithm: str
    public_key: str  # hex
    key_id: str


class CardInfo(msgspec.Struct, kw_only=True):
    """One card of a game: its id, name, the name its ruleset prints (红楼梦: 桃 is 药), its
    English name (杀 Slash, 闪 Dodge …; "" if none), suit, rank, type (basic, trick, equip)
    and subtype (attack, delayed_trick, weapon …)."""

    id: int
    name: str
    printed: str
    english: str = ""
    suit: str
    rank: int
    type: str
    subtype: str


class GeneralInfo(msgspec.Struct, kw_only=True):
    """A general: faction, max HP and skills (their text: `Catalogue.skills`)."""

    faction: str
    hp: int
    skills: list[str]


class Catalogue(msgspec.Struct, kw_only=True):
    """What a client needs to name everything of a game: each card id's card, the names the
    ruleset prints differently (cards, roles), every general it may deal with its skills, and
    every skill's text as the rules quote it. Public: it depends on the ruleset, the table size
    and the options, never on the shuffle."""

    game: str
    ruleset: str
    cards: list[CardInfo]
    names: dict[str, str]
    english: dict[str, str]  # every card name -> its English name (generals, skills: none)
    generals: dict[str, GeneralInfo]
    skills: dict[str, str]
