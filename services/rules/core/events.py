"""Events: every state change, past tense, one small frozen struct each.

Secret card faces live only in a ``cards`` field guarded by ``seen_by`` (``None`` = public); roles
and generals likewise. :mod:`.views` is the one place that applies these rules.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Base of all events; the ``type`` tag is the snake_case name."""


class GameStarted(Event, tag="game_started"):
    ruleset: str
    players: int
    options: dict[str, Any]
    rules_version: str


class RoleAssigned(Event, tag="role_assigned"):
    seat: int
    role: str
    seen_by: list[int] | None = None


class GeneralChosen(Event, tag="general_chosen"):
    seat: int
    general: str
    gender: str
    faction: str
    max_hp: int
    hp: int
    seen_by: list[int] | None = None


class DraftOffered(Event, tag="draft_offered"):
    seat: int
    generals: list[str]
    seen_by: list[int] | None = None


class TurnStarted(Event, tag="turn_started"):
    seat: int
    round: int


class PhaseStarted(Event, tag="phase_started"):
    seat: int
    phase: str


class PhaseSkipped(Event, tag="phase_skipped"):
    seat: int
    phase: str


class TurnEnded(Event, tag="turn_ended"):
    seat: int


class CardsMoved(Event, tag="cards_moved"):
    cards: list[int]
    count: int
    src: str
    dst: str
    src_seat: int = -1
    dst_seat: int = -1
    reason: str = ""
    seen_by: list[int] | None = None


class DeckReshuffled(Event, tag="deck_reshuffled"):
    count: int


class CardUsed(Event, tag="card_used"):
    user: int
    name: str
    suit: str
    rank: int
    cards: list[int]
    targets: list[int]
    skill: str = ""


class CardPlayed(Event, tag="card_played"):
    seat: int
    name: str
    suit: str
    rank: int
    cards: list[int]
    skill: str = ""


class TargetChanged(Event, tag="target_changed"):
    card: str
    old: int
    new: int
    skill: str = ""


class Nullified(Event, tag="nullified"):
    target: int
    name: str


class Ineffective(Event, tag="ineffective"):
    target: int
    name: str
    reason: str


class Dodged(Event, tag="dodged"):
    target: int
    name: str


class Damaged(Event, tag="damaged"):
    source: int
    target: int
    amount: int
    nature: str
    card: str
    hp: int


class HpLost(Event, tag="hp_lost"):
    seat: int
    amount: int
    hp: int


class Recovered(Event, tag="recovered"):
    seat: int
    amount: int
    hp: int


class MaxHpChanged(Event, tag="max_hp_changed"):
    seat: int
    max_hp: int
    hp: int


class Dying(Event, tag="dying"):
    seat: int
    hp: int


class Died(Event, tag="died"):
    seat: int
    killer: int
    role: str


class Judged(Event, tag="judged"):
    seat: int
    card: int
    reason: str
    result: bool


class ChainToggled(Event, tag="chain_toggled"):
    seat: int
    chained: bool


class SkillInvoked(Event, tag="skill_invoked"):
    seat: int
    skill: str
    targets: list[int] = msgspec.field(default_factory=list)


class SuitNamed(Event, tag="suit_named"):
    seat: int
    suit: str


class CardShown(Event, tag="card_shown"):
    seat: int
    card: int


class CounterChanged(Event, tag="counter_changed"):
    """A variant counter (护甲 ``armor``, 玉佩 ``jade``, 怒气 ``rage``) changed."""

    seat: int
    counter: str
    value: int


class GameEnded(Event, tag="game_ended"):
    winners: list[str]
    winner_seats: list[int]
    draw: bool
    roles: list[str]


def event_types() -> dict[str, type[Event]]:
    """Every event class by its ``type`` tag (including those defined by rulesets)."""
    out: dict[str, type[Event]] = {}
    stack: list[type[Event]] = [Event]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            tag = sub.__struct_config__.tag
            if isinstance(tag, str):
                out[tag] = sub
            stack.append(sub)
    return out
