"""Determinization: a full game state that one seat could be in, for look-ahead.

``determinize(g, seat, belief, seed, view=view)`` (through ``api.determinize``, which works on a
fork) is asked at ``seat``'s own decision (:class:`NotDeciding` while another seat's is pending:
its options and the frames that asked it are that seat's). What the seat may know is its view
(core/views.py), its own seat (hand, role, general, camp) and the decision it is asked; that is
kept, and everything else is dealt again from ``seed``:

- the hand cards of the other seats that ``view`` has not seen, and the draw pile: every such card
  is dealt again at random (each seat keeps its public hand count, the pile its size), except the
  top cards the seat's own 观星 is looking at, which stay on top;
- the roles ``view`` does not show: the hidden role cards are dealt again over the hidden seats,
  weighted by ``belief`` (seat -> role -> probability; ``None``: uniformly), and what goes with a
  role card with them (``Ruleset.roles_redealt``: seed 004's identity skills, a hidden 谋攻 lord's
  明君 and held-back lord skills, a rebel's disguise — the seat's own too, it is never told);
- the generals it has not seen (``Ruleset.redeal_generals``, from the pool less those it has
  seen): seed 003's other camp and a battlefield general dealt face down (one of the HP its
  seat shows, where the pool has one);
- what the frames on the stack hold that it may not know (``Frame.redeal``, core/redeal.py): the
  other seats' draft offers, their secret picks and a secret lord's seat; seed 003's generals an
  opponent is still to order; a card another seat picked unseen (拼点) or drew unseen (遗计), as
  a card now dealt into that hand; 策立's 叛徒 candidates, who are chosen by role;
- the game's seed: the future shuffles and judgements are drawn from a new one;
- the decisions' numbering: the pending decision is numbered ``number`` (the id the seat knows
  it by: clients are shown opaque ids) and the next one after it, since the engine's count of
  decisions so far takes in prompts to other seats that this seat never saw.

Made canonical rather than dealt: a number a finished frame left in ``g.ret`` (the card a blind
pick took, a damage dealt) becomes None, since every frame reads its child's value in the step
right after the child pops, never across a decision; and every seat's marks are sorted (the order
they were set in is history). Every other frame field is copied as it is: what a resolution holds
— who uses which card on whom, the cards shown, judged or paid, counts and turn indices — every
seat watched happen (each frame was read for this; a frame that comes to hold a secret must deal
it again in its ``redeal``).

What it reads from the true state beyond the view and the seat's own — which cards are unknown
(as a set, sorted), the multiset of hidden role cards and of what goes with each, the sizes of
hidden offers and camps, HP that ``max_hp_changed`` made public, which frames are on the stack
and whose turn each is at — is the same in every state the seat cannot tell apart, so the result
depends only on what the seat knows, ``belief`` and ``seed``. tests/rules/test_determinize.py
checks it: states that differ only in hidden things (hands, pile, roles with what goes with them,
face-down and undrafted generals, secret picks, a leftover value, the seed) determinize to the
same bytes, and the engine plays the result on to the end.

What the view does not keep is dealt again even where the seat once saw it (information lost,
none leaked): a card shown from a hand (``card_shown`` is not folded), a general benched face up
into a camp, a fallen general (the pool may deal it again), the rebel a 谋攻 renegade was told is
disguised (its belief still carries that seat's role), the order it left the pile in.
"""

from __future__ import annotations

from collections.abc import Mapping

from .core import rng
from .core.index import skills_changed
from .core.redeal import Redeal
from .core.registry import ruleset_of
from .core.state import Game
from .core.views import View

Belief = Mapping[int, Mapping[str, float]]


class ViewMismatch(ValueError):
    """The view is not a view of this game (a seen card is not where the view has it)."""


class NotDeciding(ValueError):
    """A decision of another seat is pending: its options and the frames that asked it are
    that seat's (its hand, its secret pick), so no state can be dealt for this one."""


def resample(
    g: Game, seat: int, belief: Belief | None, seed: int, view: View, number: int = 1
) -> Game:
    """Resample ``g`` in place (see the module docstring) and return it, its pending decision
    numbered ``number``."""
    known = _seen_hands(g, seat, view)
    if g.pending is not None and g.pending.seat != seat:
        raise NotDeciding(f"seat {g.pending.seat} is deciding, not seat {seat}")
    if g.pending is not None:
        g.pending.id = number
    g.next_decision = number + 1
    rd = _deal_cards(g, seat, seed, known)
    before = _roles(g, seat, belief, view, rd)
    g.seed = rd.u64() >> 1
    g.rng = 0
    _redeal_the_rest(g, seat, before, rd)
    skills_changed(g)  # a lord skill follows a resampled role, a skill a resampled general
    return g


def _seen_hands(g: Game, seat: int, view: View) -> dict[int, list[int]]:
    """The cards ``view`` has seen in each other hand (ViewMismatch if the game disagrees)."""
    n = len(g.players)
    if len(view.seats) != n or not 0 <= seat < n:
        raise ViewMismatch(f"a view of {len(view.seats)} seats for a game of {n}")
    known: dict[int, list[int]] = {}
    for t, p in enumerate(g.players):
        if t == seat:
            continue
        seen = [c for c in view.seats[t].hand]
        if not set(seen) <= set(p.hand) or view.seats[t].hand_count != len(p.hand):
            raise ViewMismatch(f"seat {t}'s hand is not as the view has it")
        known[t] = seen
    if view.draw_count != len(g.draw):
        raise ViewMismatch("the draw pile is not the size the view has")
    return known


def _deal_cards(g: Game, seat: int, seed: int, known: dict[int, list[int]]) -> Redeal:
    """Deal the cards of the other hands not ``known`` to ``seat``, and the pile, again; the
    draws for the rest go on where this deal stopped."""
    dealt: dict[int, tuple[str, int]] = {c: ("draw", i) for i, c in enumerate(g.draw)}
    for t, seen in known.items():
        dealt.update((c, ("hand", t)) for c in g.players[t].hand if c not in seen)
    pool = sorted(dealt)
    perm, counter = rng.shuffle_indices(seed, 0, len(pool))
    cards = [pool[i] for i in perm]
    fresh: dict[int, list[int]] = {}
    at = 0
    for t, seen in known.items():
        p = g.players[t]
        need = len(p.hand) - len(seen)
        fresh[t] = cards[at : at + need]
        p.hand = seen + fresh[t]
        at += need
    g.draw = cards[at:]
    return Redeal(seat, seed, counter, dealt, fresh)


def _roles(g: Game, seat: int, belief: Belief | None, view: View, rd: Redeal) -> dict[int, str]:
    """Deal the hidden role cards again over the seats whose role ``view`` does not show;
    returns those seats with the role each held."""
    hidden = [t for t in range(len(g.players)) if t != seat and not view.seats[t].role]
    before = {t: g.players[t].role for t in hidden}
    left = sorted(before.values())
    for t in hidden:
        options = sorted(set(left))
        w = [left.count(r) * (belief.get(t, {}).get(r, 0.0) if belief else 1.0) for r in options]
        if sum(w) <= 0:
            w = [float(left.count(r)) for r in options]
        x = rd.u64() / 2.0**64 * sum(w)
        pick = options[-1]
        for r, wr in zip(options, w, strict=True):
            if x < wr:
                pick = r
                break
            x -= wr
        g.players[t].role = pick
        left.remove(pick)
    return before


def _redeal_the_rest(g: Game, seat: int, before: dict[int, str], rd: Redeal) -> None:
    """What the ruleset and the frames keep that ``seat`` may not know, dealt again by them
    (core/redeal.py), and what is left over from the past made canonical."""
    rs = ruleset_of(g)
    rs.roles_redealt(g, seat, before, rd)
    rd.offer_generals(rs.general_pool(g), rs.seen_generals(g, seat))
    rs.redeal_generals(g, seat, rd)
    for fr in g.stack:
        fr.redeal(g, rd)
    if type(g.ret) is int:
        # a number left by a finished frame: a card taken blindly (PickCard) or a damage dealt.
        # Every frame reads its child's value in the step right after the child pops, with no
        # decision between, and a decision is pending: nobody reads this one again
        g.ret = None
    for p in g.players:  # marks are named numbers: the order they were set in is history
        p.marks = dict(sorted(p.marks.items()))


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
