"""Determinization: a full game state that one seat could be in, for look-ahead.

``determinize(g, seat, belief, seed, view=view)`` (through ``api.determinize``, which works on a
fork) keeps everything ``seat`` knows and resamples everything it does not:

- the hand cards of the other seats that ``view`` has not seen, and the draw pile: every such card
  is dealt again at random (each seat keeps its public hand count, the pile its size);
- the roles ``view`` does not show: the hidden role cards are dealt again over the hidden seats,
  weighted by ``belief`` (seat -> role -> probability; ``None``: uniformly);
- the game's seed: the future shuffles and judgements are drawn from a new one.

What it reads from the true state beyond the view — which cards are unknown (as a set, sorted),
and the multiset of hidden role cards — is the same in every state the seat cannot tell apart,
so the result depends only on what the seat knows, ``belief`` and ``seed`` (the property tests
in tests/rules/test_determinize.py check this by determinizing states that differ only in hidden
things). Not resampled: generals dealt face down and cards a ruleset keeps face down in its own
seat state; the frames on the stack are copied as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

from .core import rng
from .core.index import skills_changed
from .core.state import Game
from .core.views import View

Belief = Mapping[int, Mapping[str, float]]


class ViewMismatch(ValueError):
    """The view is not a view of this game (a seen card is not where the view has it)."""


def _u01(seed: int, counter: int) -> float:
    return rng.random_u64(seed, counter) / 2.0**64


def resample(g: Game, seat: int, belief: Belief | None, seed: int, view: View) -> Game:
    """Resample ``g`` in place (see the module docstring) and return it."""
    n = len(g.players)
    if len(view.seats) != n or not 0 <= seat < n:
        raise ViewMismatch(f"a view of {len(view.seats)} seats for a game of {n}")
    known: dict[int, list[int]] = {}
    unknown: set[int] = set(g.draw)
    for t, p in enumerate(g.players):
        if t == seat:
            continue
        seen = [c for c in view.seats[t].hand]
        if not set(seen) <= set(p.hand) or view.seats[t].hand_count != len(p.hand):
            raise ViewMismatch(f"seat {t}'s hand is not as the view has it")
        known[t] = seen
        unknown.update(c for c in p.hand if c not in seen)
    if view.draw_count != len(g.draw):
        raise ViewMismatch("the draw pile is not the size the view has")
    pool = sorted(unknown)
    perm, counter = rng.shuffle_indices(seed, 0, len(pool))
    cards = [pool[i] for i in perm]
    at = 0
    for t, p in enumerate(g.players):
        if t == seat:
            continue
        need = len(p.hand) - len(known[t])
        p.hand = known[t] + cards[at : at + need]
        at += need
    g.draw = cards[at:]
    counter = _roles(g, seat, belief, seed, view, counter)
    skills_changed(g)  # a lord skill follows a resampled role
    g.seed = rng.random_u64(seed, counter) >> 1
    g.rng = 0
    return g


def _roles(g: Game, seat: int, belief: Belief | None, seed: int, view: View, counter: int) -> int:
    """Deal the hidden role cards again over the seats whose role ``view`` does not show."""
    hidden = [t for t in range(len(g.players)) if t != seat and not view.seats[t].role]
    left = sorted(g.players[t].role for t in hidden)
    for t in hidden:
        options = sorted(set(left))
        w = [left.count(r) * (belief.get(t, {}).get(r, 0.0) if belief else 1.0) for r in options]
        if sum(w) <= 0:
            w = [float(left.count(r)) for r in options]
        x = _u01(seed, counter) * sum(w)
        counter += 1
        pick = options[-1]
        for r, wr in zip(options, w, strict=True):
            if x < wr:
                pick = r
                break
            x -= wr
        g.players[t].role = pick
        left.remove(pick)
    return counter


def contradictions(g: Game, view: View) -> list[str]:
    """What in ``g`` disagrees with ``view`` (empty: ``g`` is a state the viewer could be in)."""
    out: list[str] = []
    if view.draw_count != len(g.draw):
        out.append("draw pile size")
    if sorted(view.discard) != sorted(g.discard):
        out.append("discard pile")
    for t, (p, s) in enumerate(zip(g.players, view.seats, strict=True)):
        if t == view.viewer and sorted(p.hand) != sorted(s.hand):
            out.append(f"seat {t}: own hand")
        if s.hand_count != len(p.hand) or not set(s.hand) <= set(p.hand):
            out.append(f"seat {t}: hand")
        if sorted(s.equip) != sorted(p.equip.values()) or list(s.judge) != list(p.judge):
            out.append(f"seat {t}: equipment or judgement area")
        if s.role and s.role != p.role:
            out.append(f"seat {t}: role")
        if s.alive != p.alive or s.max_hp and s.hp != p.hp:  # no HP shown before a general
            out.append(f"seat {t}: hp")
    return out
