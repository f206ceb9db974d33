"""The parsed form of a scenario file (SCENARIOS.md, format v1): small frozen structs, no behaviour."""

from __future__ import annotations

from typing import Literal

import msgspec

SUITS = ("S", "H", "C", "D")
PHASES = ("start", "judge", "draw", "play", "discard", "finish")
INTENT_KINDS = ("use", "play", "skill", "choose", "discard", "pass", "end")
ROLES = (
    "lord",
    "loyalist",
    "rebel",
    "renegade",
    "chujun",
    "zeishou",
    "chengxiang",
    "dajiang",
    "ninghuan",
    "dangren",
    "qiongkou",
    "yizei",
    "baomin",
    "daofei",
    "pantu",
)
RULESETS_WITHOUT_ROLES = ("chengtian",)

Suit = Literal["S", "H", "C", "D"]
IntentKind = Literal["use", "play", "skill", "choose", "discard", "pass", "end"]


class ScenarioFormatError(Exception):
    """A scenario file breaks the format: names the file, the field path and what was expected."""

    def __init__(self, source: str, path: str, expected: str) -> None:
        self.source = source
        self.path = path
        self.expected = expected
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {expected}")


class CardRef(msgspec.Struct, frozen=True):
    """One card of the table: `NAME SUIT RANK [#COPY]` (名 as written; the ruleset resolves aliases)."""

    name: str
    suit: Suit
    rank: int
    copy: int = 1

    def __str__(self) -> str:
        rank = {1: "A", 11: "J", 12: "Q", 13: "K"}.get(self.rank, str(self.rank))
        tail = f" #{self.copy}" if self.copy > 1 else ""
        return f"{self.name} {self.suit}{rank}{tail}"


class SeatSpec(msgspec.Struct, frozen=True):
    """One seat of the table, in turn order."""

    general: str
    role: str | None = None
    hp: int | None = None
    max_hp: int | None = None
    hand: tuple[CardRef, ...] = ()
    equip: tuple[CardRef, ...] = ()
    judge: tuple[CardRef, ...] = ()
    gender: str | None = None
    armor: int = 0
    jade: int = 0
    rage: int = 0
    camp: tuple[str, ...] = ()
    alive: bool = True


class TurnSpec(msgspec.Struct, frozen=True):
    """A seat and a phase: where play starts, or where the run stopped."""

    seat: int = 0
    phase: str = "start"


class Intent(msgspec.Struct, frozen=True):
    """A parsed script intent; unused parts are empty.

    `cards`: the cards used, played, given with a skill, discarded or chosen; `as_name`: the
    conversion target (`as NAME`); `targets`: seat numbers after `->` (for `choose seat N`, the
    seats chosen); `skill`: the skill of `skill NAME`; `words`: the other words of `choose`
    (suits as `S H C D`, option keys such as `discard`, `hand`).
    """

    kind: IntentKind
    cards: tuple[CardRef, ...] = ()
    as_name: str | None = None
    targets: tuple[int, ...] = ()
    skill: str | None = None
    words: tuple[str, ...] = ()


class Step(msgspec.Struct, frozen=True):
    """One script step `SEAT: INTENT`; `intent` is the text as written, `parsed` its structure."""

    seat: int
    intent: str
    parsed: Intent


class SeatExpect(msgspec.Struct, frozen=True):
    """Per-seat checks; None means "not checked"."""

    hp: int | None = None
    max_hp: int | None = None
    alive: bool | None = None
    hand: tuple[CardRef, ...] | None = None
    hand_count: int | None = None
    equip: tuple[CardRef, ...] | None = None
    judge: tuple[CardRef, ...] | None = None
    role_revealed: bool | None = None
    armor: int | None = None
    jade: int | None = None
    rage: int | None = None
    general: str | None = None


class Waiting(msgspec.Struct, frozen=True):
    """The pending decision expected where the run stops."""

    seat: int
    kind: str


class EventPattern(msgspec.Struct, frozen=True):
    """An event that must have occurred: its `type` and the fields to compare.

    Field values that are card notation are parsed into CardRef (lists into tuples of them).
    """

    type: str
    fields: dict[str, object] = msgspec.field(default_factory=dict)


Winners = tuple[str, ...] | tuple[int, ...] | Literal["draw"]


class Expect(msgspec.Struct, frozen=True):
    """The checks made where the run stops; None or empty means "not checked"."""

    seats: dict[int, SeatExpect] = msgspec.field(default_factory=dict)
    discard_has: tuple[CardRef, ...] = ()
    discard_lacks: tuple[CardRef, ...] = ()
    deck_count: int | None = None
    waiting: Waiting | None = None
    turn: TurnSpec | None = None
    winners: Winners | None = None
    events: tuple[EventPattern, ...] = ()


class ExpectError(msgspec.Struct, frozen=True):
    """The step (0-based) the engine must reject, optionally with a word the reason contains."""

    step: int
    contains: str | None = None


class Scenario(msgspec.Struct, frozen=True):
    """A whole scenario file."""

    source: str
    name: str
    ruleset: str
    seats: tuple[SeatSpec, ...]
    options: dict[str, object] = msgspec.field(default_factory=dict)
    deck: tuple[CardRef, ...] = ()
    discard: tuple[CardRef, ...] = ()
    seed: int | None = None
    fill: bool = False
    turn: TurnSpec = TurnSpec()
    script: tuple[Step, ...] = ()
    expect: Expect | None = None
    expect_error: ExpectError | None = None
