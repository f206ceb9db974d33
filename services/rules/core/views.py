"""The one place that owns secrecy: ``redact(event, viewer)`` and the view fold ``apply``.

A viewer is a seat number, ``SPECTATOR`` or ``GOD`` (everything; for finished games and for
tables whose spectator delay allows it). Seats, spectators, bots and the web viewer all consume
views built by folding redacted events, never the game state.

Redaction is a registry: whoever defines a secret event (the core for its own events, a ruleset
for the events of its variant) declares, with :func:`secret`, what a viewer outside ``seen_by``
receives instead. ``redact`` fails closed: a guarded event nobody declared raises TypeError, so a
new secret event cannot reach a viewer whole by being forgotten here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from . import events as ev

E = TypeVar("E", bound=ev.Event)
Redaction = Callable[[Any], ev.Event]
Fold = Callable[["View", Any], None]
REDACTIONS: dict[type[ev.Event], Redaction] = {}
FOLDS: dict[type[ev.Event], Fold] = {}


def secret(cls: type[E], blank: Callable[[E], ev.Event], fold: Fold | None = None) -> None:
    """Declare the guarded event type ``cls``: ``blank(e)`` is what a viewer outside
    ``e.seen_by`` receives (every secret field emptied; if even who learns it is secret, the
    seats too). ``fold`` folds the event into a view (after redaction), when views track it."""
    if REDACTIONS.get(cls, blank) is not blank:
        raise ValueError(f"{cls.__name__} already has a redaction rule")
    REDACTIONS[cls] = blank
    if fold is not None:
        FOLDS[cls] = fold


SPECTATOR = -1
GOD = -2


# Being asked at all can give a hand away (the engine never asks a seat with no legal answer: a
# 无懈可击 prompt says the seat holds one), so only these decisions are public to other viewers.
PUBLIC_FOR_ACTIVE = frozenset({"play", "discard", "targets"})  # of the seat whose turn it is
PUBLIC_FOR_ANY = frozenset({"draft"})


def decision_visible(kind: str, seat: int, active: int, viewer: int) -> bool:
    """Whether ``viewer`` may learn that ``seat`` is being asked a ``kind`` decision now
    (``active`` is the seat whose turn it is). The deciding seat and GOD always may."""
    if viewer in (GOD, seat):
        return True
    return kind in PUBLIC_FOR_ANY or (kind in PUBLIC_FOR_ACTIVE and seat == active)


def visible(seen_by: list[int] | None, viewer: int) -> bool:
    """Whether a guarded field is visible to ``viewer``."""
    return seen_by is None or viewer == GOD or viewer in seen_by


def redact(e: ev.Event, viewer: int) -> ev.Event:
    """``e`` as ``viewer`` may see it: secret card faces, roles and generals removed (by the
    rule its owner declared with :func:`secret`)."""
    seen_by = getattr(e, "seen_by", None)
    if seen_by is None or viewer == GOD or viewer in seen_by:
        return e
    blank = REDACTIONS.get(type(e))
    if blank is None:
        raise TypeError(f"no redaction rule for guarded event {type(e).__name__}")
    return blank(e)


# the core's own secret events
secret(ev.CardsMoved, lambda e: msgspec.structs.replace(e, cards=[]))
secret(ev.RoleAssigned, lambda e: msgspec.structs.replace(e, role=""))
secret(
    ev.GeneralChosen,
    lambda e: msgspec.structs.replace(e, general="", gender="", faction="", max_hp=0, hp=0),
)
secret(ev.DraftOffered, lambda e: msgspec.structs.replace(e, generals=[]))


class SeatView(msgspec.Struct, kw_only=True):
    """What a viewer knows of one seat."""

    seat: int
    general: str = ""
    role: str = ""
    hp: int = 0
    max_hp: int = 0
    alive: bool = True
    hand_count: int = 0
    hand: list[int] = msgspec.field(default_factory=list)  # the faces this viewer has seen
    equip: list[int] = msgspec.field(default_factory=list)
    judge: list[int] = msgspec.field(default_factory=list)
    chained: bool = False
    counters: dict[str, int] = msgspec.field(default_factory=dict)


class View(msgspec.Struct, kw_only=True):
    """A viewer's picture of the table, built only from redacted events."""

    viewer: int
    ruleset: str = ""
    seats: list[SeatView] = msgspec.field(default_factory=list)
    draw_count: int = 0
    discard: list[int] = msgspec.field(default_factory=list)
    current: int = -1
    phase: str = ""
    round: int = 0
    over: bool = False
    winners: list[int] = msgspec.field(default_factory=list)
    seq: int = 0


def new_view(viewer: int) -> View:
    """An empty view for ``viewer``."""
    return View(viewer=viewer)


def _zone_remove(v: View, zone: str, seat: int, cards: list[int], count: int) -> None:
    if zone == "draw":
        v.draw_count -= count
    elif zone == "discard":
        v.discard = [c for c in v.discard if c not in cards]
    elif seat >= 0 and zone == "hand":
        s = v.seats[seat]
        s.hand_count -= count
        # an unseen card left: any card we knew to be in that hand may be the one that went
        s.hand = [c for c in s.hand if c not in cards] if cards or not count else []
    elif seat >= 0 and zone == "equip":
        v.seats[seat].equip = [c for c in v.seats[seat].equip if c not in cards]
    elif seat >= 0 and zone == "judge":
        v.seats[seat].judge = [c for c in v.seats[seat].judge if c not in cards]


def _zone_add(v: View, zone: str, seat: int, cards: list[int], count: int) -> None:
    if zone == "draw":
        v.draw_count += count
    elif zone == "discard":
        v.discard.extend(cards)
    elif seat >= 0 and zone == "hand":
        v.seats[seat].hand_count += count
        v.seats[seat].hand.extend(cards)
    elif seat >= 0 and zone == "equip":
        v.seats[seat].equip.extend(cards)
    elif seat >= 0 and zone == "judge":
        v.seats[seat].judge.extend(cards)


def _moved(v: View, e: ev.CardsMoved) -> None:
    _zone_remove(v, e.src, e.src_seat, e.cards, e.count)
    _zone_add(v, e.dst, e.dst_seat, e.cards, e.count)


def _damaged(v: View, e: ev.Damaged) -> None:
    v.seats[e.target].hp = e.hp


def _hp(v: View, e: ev.HpLost | ev.Recovered) -> None:
    v.seats[e.seat].hp = e.hp


def _max_hp(v: View, e: ev.MaxHpChanged) -> None:
    v.seats[e.seat].max_hp, v.seats[e.seat].hp = e.max_hp, e.hp


def _turn(v: View, e: ev.TurnStarted) -> None:
    v.current, v.round = e.seat, e.round


def _phase(v: View, e: ev.PhaseStarted) -> None:
    v.phase = e.phase


def _died(v: View, e: ev.Died) -> None:
    v.seats[e.seat].alive = False
    v.seats[e.seat].role = e.role


def _chained(v: View, e: ev.ChainToggled) -> None:
    v.seats[e.seat].chained = e.chained


def _role(v: View, e: ev.RoleAssigned) -> None:
    v.seats[e.seat].role = e.role


def _general(v: View, e: ev.GeneralChosen) -> None:
    s = v.seats[e.seat]
    if e.general:
        s.general, s.hp, s.max_hp = e.general, e.hp, e.max_hp


def _counter(v: View, e: ev.CounterChanged) -> None:
    v.seats[e.seat].counters[e.counter] = e.value


def _reshuffled(v: View, e: ev.DeckReshuffled) -> None:
    v.draw_count += e.count
    v.discard = []


def _started(v: View, e: ev.GameStarted) -> None:
    v.ruleset = e.ruleset
    v.seats = [SeatView(seat=i) for i in range(e.players)]
    v.draw_count = e.deck


def _ended(v: View, e: ev.GameEnded) -> None:
    v.over = True
    v.winners = list(e.winner_seats)
    for s, role in zip(v.seats, e.roles, strict=False):
        s.role = role


CORE_FOLDS: dict[type[ev.Event], Fold] = {
    ev.CardsMoved: _moved,
    ev.Damaged: _damaged,
    ev.HpLost: _hp,
    ev.Recovered: _hp,
    ev.MaxHpChanged: _max_hp,
    ev.TurnStarted: _turn,
    ev.PhaseStarted: _phase,
    ev.Died: _died,
    ev.ChainToggled: _chained,
    ev.RoleAssigned: _role,
    ev.GeneralChosen: _general,
    ev.CounterChanged: _counter,
    ev.DeckReshuffled: _reshuffled,
    ev.GameStarted: _started,
    ev.GameEnded: _ended,
}
"""How the core's events change a view, by event type (one dict look-up per event, where a
chain of isinstance tests cost up to fifteen); a ruleset's events fold through ``FOLDS``."""


def apply(v: View, e: ev.Event) -> View:
    """Fold one (already redacted) event into the view."""
    v.seq += 1
    t = type(e)
    fold = CORE_FOLDS.get(t) or FOLDS.get(t)
    if fold is not None:
        fold(v, e)
    return v


def fold(events: list[ev.Event], viewer: int, v: View | None = None) -> View:
    """Redact and fold a list of events for ``viewer``."""
    v = v or new_view(viewer)
    for e in events:
        apply(v, redact(e, viewer))
    return v


def to_builtins(v: View) -> Any:
    """A view as plain JSON-able data."""
    return msgspec.to_builtins(v)
