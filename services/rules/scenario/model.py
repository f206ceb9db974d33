"""The parsed form of a scenario file (SCENARIOS.md, format v1): small frozen structs, no behaviour.

The structs are also the file's schema: the loader converts the YAML data into them with msgspec
(unknown keys rejected, constraints checked), so the format and the structs cannot drift apart.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

import msgspec

Suit = Literal["S", "H", "C", "D"]
Phase = Literal["start", "judge", "draw", "play", "discard", "finish"]
Role = Literal[
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
]
SUITS: tuple[str, ...] = get_args(Suit)
PHASES: tuple[str, ...] = get_args(Phase)
ROLES: tuple[str, ...] = get_args(Role)
IntentKind = Literal["use", "play", "skill", "choose", "discard", "pass", "end"]
Count = Annotated[int, msgspec.Meta(ge=0)]
Text = Annotated[str, msgspec.Meta(min_length=1)]


class ScenarioFormatError(Exception):
    """A scenario file breaks the format: names the file, the field path and what was expected."""

    def __init__(self, source: str, path: str, expected: str) -> None:
        self.source = source
        self.path = path
        self.expected = expected
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {expected}")


class CardRef:
    """One card of the table: `NAME SUIT RANK [#COPY]` (名 as written; the ruleset resolves aliases).

    A plain value class rather than a struct: in a file it is a string, which the loader parses.
    """

    __slots__ = ("name", "suit", "rank", "copy")

    def __init__(self, name: str, suit: Suit, rank: int, copy: int = 1) -> None:
        self.name = name
        self.suit = suit
        self.rank = rank
        self.copy = copy

    def _key(self) -> tuple[str, str, int, int]:
        return (self.name, self.suit, self.rank, self.copy)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CardRef) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"CardRef({str(self)!r})"

    def __str__(self) -> str:
        rank = {1: "A", 11: "J", 12: "Q", 13: "K"}.get(self.rank, str(self.rank))
        tail = f" #{self.copy}" if self.copy > 1 else ""
        return f"{self.name} {self.suit}{rank}{tail}"


class _Schema(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A struct that is also a part of the file's schema (unknown keys are errors)."""


class SeatSpec(_Schema, frozen=True):
    """One seat of the table, in turn order."""

    general: Text
    role: Role | None = None
    hp: int | None = None
    max_hp: Annotated[int, msgspec.Meta(ge=1)] | None = None
    hand: tuple[CardRef, ...] = ()
    equip: tuple[CardRef, ...] = ()
    judge: tuple[CardRef, ...] = ()
    gender: Literal["male", "female"] | None = None
    armor: Count = 0
    jade: Count = 0
    rage: Count = 0
    camp: tuple[Text, ...] = ()
    alive: bool = True


class TurnSpec(_Schema, frozen=True):
    """A seat and a phase: where play starts, or where the run stopped."""

    seat: Count = 0
    phase: Phase = "start"


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


class SeatExpect(_Schema, frozen=True):
    """Per-seat checks; None means "not checked"."""

    hp: int | None = None
    max_hp: Count | None = None
    alive: bool | None = None
    hand: tuple[CardRef, ...] | None = None
    hand_count: Count | None = None
    equip: tuple[CardRef, ...] | None = None
    judge: tuple[CardRef, ...] | None = None
    role_revealed: bool | None = None
    armor: Count | None = None
    jade: Count | None = None
    rage: Count | None = None
    general: Text | None = None


class Waiting(_Schema, frozen=True):
    """The pending decision expected where the run stops."""

    seat: Count
    kind: Text


class EventPattern(msgspec.Struct, frozen=True):
    """An event that must have occurred: its `type` and the fields to compare.

    Field values that are card notation are parsed into CardRef (lists into tuples of them).
    """

    type: str
    fields: dict[str, object] = msgspec.field(default_factory=dict)


Winners = tuple[str, ...] | tuple[int, ...] | Literal["draw"]


class Expect(_Schema, frozen=True):
    """The checks made where the run stops; None or empty means "not checked"."""

    seats: dict[int, SeatExpect] = msgspec.field(default_factory=dict)
    discard_has: tuple[CardRef, ...] = ()
    discard_lacks: tuple[CardRef, ...] = ()
    deck_count: Count | None = None
    waiting: Waiting | None = None
    turn: TurnSpec | None = None
    winners: Literal["draw"] | tuple[str | int, ...] | None = None
    events: tuple[EventPattern, ...] = ()


class ExpectError(_Schema, frozen=True):
    """The step (0-based) the engine must reject, optionally with a word the reason contains."""

    step: Count
    contains: Text | None = None


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
