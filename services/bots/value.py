"""The value of a (determinized) state from one seat's side, for the look-ahead's play-outs: an
estimate of P(that seat's side wins), in [0, 1].

The roles are the world's (drawn from the seat's belief), so the mean over worlds is the value
under the belief. A decided game is 1 or 0. Otherwise, on the tables the model was fitted for
(:mod:`.valuemodel`, by :mod:`.valuefit` from all-heuristic self-play), a logistic model per role
class and phase (:func:`phase_key`) over camp features: per class the life of its seats (:func:`life`: being alive and HP as
one monotone worth), their cards, 桃 in hand, gear and cards in the judgement area; my own
life, cards and 桃; the lord at 1 or 2 HP. Elsewhere a hand-set
score: every seat alive weighted by how much my role wants it to prosper
(:func:`.threat.relations`) — a life, its HP (the last points count most), its cards and gear,
the lord's danger — squashed into (0, 1).
"""

from __future__ import annotations

import math

from ..rules import api
from ..rules.api import Game
from .roles import classes_of, table_key
from .threat import relations

CLASSES = ("lord", "loyalist", "rebel", "renegade", "third")
PER_CLASS = ("life", "cards", "peaches", "gear", "judge")
FEATURES = (
    ["bias"]
    + [f"{c}_{f}" for c in CLASSES for f in PER_CLASS]
    + ["my_life", "my_cards", "my_peaches", "lord_hp1", "lord_hp2"]
)
LIFE = 6.0
HP = (0.0, 3.0, 5.0, 6.5, 7.5, 8.3, 9.0, 9.6, 10.1, 10.5)  # worth of 0, 1, 2 … HP
CARD, GEAR = 0.5, 0.6
LORD_DANGER = 4.0  # taken off the lord's worth at 1 HP, half of it at 2 HP
SCALE = 15.0  # hand-set score -> logit


def classes(g: Game) -> list[str]:
    """Each seat's role class in world ``g`` (``renegade`` for a role playing alone; ``""``
    in a game without roles)."""
    rs = api.RULESETS[g.ruleset]
    cls = classes_of({p.role for p in g.players} | set(rs.camps), rs.camps)
    return [cls.get(p.role, "renegade") if p.role else "" for p in g.players]


def life(hp: int) -> float:
    """A seat's life and HP as one monotone worth (the last points count most; 0 when dead):
    one number per seat, so the model cannot learn from a confounded 'alive' count that a
    death helps the side that lost the seat."""
    return LIFE + HP[min(max(hp, 0), len(HP) - 1)] if hp > 0 else 0.0


def features(g: Game, me: int, of: list[str]) -> list[float]:
    """The model's inputs for ``me`` in ``g`` (:data:`FEATURES`, in order)."""
    x = [0.0] * len(FEATURES)
    x[0] = 1.0
    lord_hp = 0
    names = g.cards
    for p in g.players:
        if not p.alive or of[p.seat] not in CLASSES:
            continue
        base = 1 + CLASSES.index(of[p.seat]) * len(PER_CLASS)
        x[base] += life(p.hp)
        x[base + 1] += min(len(p.hand), 8)
        x[base + 2] += sum(1 for c in p.hand if names[c].name == "桃")
        x[base + 3] += len(p.equip)
        x[base + 4] += len(p.judge)
        if of[p.seat] == "lord":
            lord_hp = p.hp
    m = g.players[me]
    tail = 1 + len(CLASSES) * len(PER_CLASS)
    if m.alive:
        x[tail] = life(m.hp)
        x[tail + 1] = min(len(m.hand), 8)
        x[tail + 2] = sum(1 for c in m.hand if names[c].name == "桃")
    x[tail + 3] = float(lord_hp == 1)
    x[tail + 4] = float(lord_hp == 2)
    return x


def phase_key(g: Game, me: int, of: list[str]) -> str:
    """The model's name for ``me``'s class in this phase: ``CLASS`` while a rebel lives, else
    ``CLASS/late`` (then the renegade turns on the lord's side, and the lord's side on it)."""
    rebels = any(p.alive and of[p.seat] == "rebel" for p in g.players)
    return of[me] if rebels else f"{of[me]}/late"


def _model(g: Game) -> dict[str, tuple[float, ...]] | None:
    from .valuemodel import WEIGHTS

    return WEIGHTS.get(table_key(g.ruleset, len(g.players), g.options))


def worth(g: Game, seat: int) -> float:
    """One seat's standing in the hand-set score: a life, its HP, its cards and gear."""
    p = g.players[seat]
    if not p.alive:
        return 0.0
    hp = HP[min(max(p.hp, 0), len(HP) - 1)]
    return LIFE + hp + CARD * min(len(p.hand), 8) + GEAR * len(p.equip)


def hand_set(g: Game, me: int, of: list[str]) -> float:
    """The hand-set score of the table from ``me``'s side (unbounded)."""
    alive = [p for p in g.players if p.alive]
    if not of[me]:  # no roles (a 1v1): me against everyone else
        return sum(worth(g, p.seat) * (1.0 if p.seat == me else -1.0) for p in alive)
    rel = relations(
        of[me],
        sum(of[p.seat] == "rebel" for p in alive),
        sum(of[p.seat] in ("lord", "loyalist") for p in alive),
        sum(of[p.seat] == "renegade" for p in alive),
    )
    v = 0.0
    for p in alive:
        sign = 1.0 if p.seat == me else rel.get(of[p.seat], 0.0)
        w = worth(g, p.seat)
        if of[p.seat] == "lord" and p.hp <= 2:
            w -= LORD_DANGER / max(p.hp, 1)
        v += sign * w
    return v


def out_alone(g: Game, me: int, of: list[str]) -> bool:
    """Whether ``me`` is a renegade who can no longer win: dead, and no seat of its class alive
    to win for it (a renegade wins only as the last one standing; in extended's 内奸 camp a
    叛徒 alive may still win for it)."""
    if of[me] != "renegade" or g.players[me].alive:
        return False
    return not any(p.alive and of[p.seat] == "renegade" for p in g.players)


def value(
    g: Game, me: int, of: list[str], fitted: bool = True, hand_set_for: frozenset[str] = frozenset()
) -> float:
    """P(``me``'s side wins) as estimated from ``g`` under the world's roles ``of`` (``fitted``
    False: the hand-set score on every table; ``hand_set_for``: the phase keys, as
    :func:`phase_key` names them, scored by the hand-set score even where a model is fitted). A
    renegade dead for good is 0: the fitted model, fitted on seats alive, only ever saw it alive
    and scores its death as a small loss."""
    if g.over:
        return 1.0 if me in g.winners else 0.0
    if out_alone(g, me, of):
        return 0.0
    model = _model(g) if fitted else None
    w = None
    if model is not None:  # the phase key only where there is a model to look it up in
        key = phase_key(g, me, of)
        w = None if key in hand_set_for else model.get(key)
    if w is not None:
        z = sum(a * b for a, b in zip(w, features(g, me, of), strict=True))
    else:
        z = hand_set(g, me, of) / SCALE
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))
