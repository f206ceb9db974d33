"""Events: every state change, past tense, one small frozen struct each.

Secret card faces live only in a ``cards`` field guarded by ``seen_by`` (``None`` = public); roles
and generals likewise. :mod:`.views` is the one place that applies these rules.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Base of all events; the ``type`` tag is the snake_case name."""


class GameStarted(Event, frozen=True, tag="game_started"):
    ruleset: str
    players: int
    options: dict[str, Any]
    rules_version: str
    deck: int = 0  # cards in the game (the draw pile before dealing)


class RoleAssigned(Event, frozen=True, tag="role_assigned"):
    seat: int
    role: str
    seen_by: list[int] | None = None


class RoleLearned(Event, frozen=True, tag="role_learned"):
    """``learner`` privately learns ``seat``'s role (an identity skill such as 立储); seen by the
    learner only — for anyone else every field is blanked, so not even who learned what leaks."""

    learner: int
    seat: int
    role: str
    seen_by: list[int] | None = None


class GeneralChosen(Event, frozen=True, tag="general_chosen"):
    seat: int
    general: str
    gender: str
    faction: str
    max_hp: int
    hp: int
    seen_by: list[int] | None = None


class DraftOffered(Event, frozen=True, tag="draft_offered"):
    seat: int
    generals: list[str]
    seen_by: list[int] | None = None


class TurnStarted(Event, frozen=True, tag="turn_started"):
    seat: int
    round: int


class PhaseStarted(Event, frozen=True, tag="phase_started"):
    seat: int
    phase: str


class PhaseSkipped(Event, frozen=True, tag="phase_skipped"):
    seat: int
    phase: str


class TurnEnded(Event, frozen=True, tag="turn_ended"):
    seat: int


class CardsMoved(Event, frozen=True, tag="cards_moved"):
    cards: list[int]
    count: int
    src: str
    dst: str
    src_seat: int = -1
    dst_seat: int = -1
    reason: str = ""
    seen_by: list[int] | None = None


class DeckReshuffled(Event, frozen=True, tag="deck_reshuffled"):
    count: int


class CardUsed(Event, frozen=True, tag="card_used"):
    user: int
    name: str
    suit: str
    rank: int
    cards: list[int]
    targets: list[int]
    skill: str = ""


class CardPlayed(Event, frozen=True, tag="card_played"):
    seat: int
    name: str
    suit: str
    rank: int
    cards: list[int]
    skill: str = ""


class TargetChanged(Event, frozen=True, tag="target_changed"):
    card: str
    old: int
    new: int
    skill: str = ""


class Nullified(Event, frozen=True, tag="nullified"):
    target: int
    name: str


class Ineffective(Event, frozen=True, tag="ineffective"):
    target: int
    name: str
    reason: str


class Dodged(Event, frozen=True, tag="dodged"):
    target: int
    name: str


class Damaged(Event, frozen=True, tag="damaged"):
    source: int
    target: int
    amount: int
    nature: str
    card: str
    hp: int


class HpLost(Event, frozen=True, tag="hp_lost"):
    seat: int
    amount: int
    hp: int


class Recovered(Event, frozen=True, tag="recovered"):
    seat: int
    amount: int
    hp: int


class MaxHpChanged(Event, frozen=True, tag="max_hp_changed"):
    seat: int
    max_hp: int
    hp: int


class Dying(Event, frozen=True, tag="dying"):
    seat: int
    hp: int


class Died(Event, frozen=True, tag="died"):
    seat: int
    killer: int
    role: str


class Judged(Event, frozen=True, tag="judged"):
    seat: int
    card: int
    reason: str
    result: bool


class ChainToggled(Event, frozen=True, tag="chain_toggled"):
    seat: int
    chained: bool


class SkillInvoked(Event, frozen=True, tag="skill_invoked"):
    seat: int
    skill: str
    targets: list[int] = msgspec.field(default_factory=list)


class SuitNamed(Event, frozen=True, tag="suit_named"):
    seat: int
    suit: str


class CardShown(Event, frozen=True, tag="card_shown"):
    seat: int
    card: int


class CounterChanged(Event, frozen=True, tag="counter_changed"):
    """A seat's public counter kept by its ruleset (护甲 ``armor``, 玉佩 ``jade`` …) changed."""

    seat: int
    counter: str
    value: int


class GameEnded(Event, frozen=True, tag="game_ended"):
    winners: list[str]
    winner_seats: list[int]
    draw: bool
    roles: list[str]
    # why a game ended without a winner (core/options.py: reshuffle_limit, deck_exhausted,
    # no_winner); empty for a win
    reason: str = ""


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
