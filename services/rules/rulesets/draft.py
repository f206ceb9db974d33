"""The general draft shared by the rulesets with generals (honglou A-000-10, standard's generals
option, jinyu §5.1): the lord is offered its lord candidates plus random generals and picks first
(publicly, or in secret when the lord is hidden — or, with ``shared_draft``, the hidden lord is
dealt from the same pool as everyone, no lord offer); every other seat is offered
k = min(max_offer, floor(remaining / (N − 1))) of the rest and picks in secret
(``draft_offered`` and ``general_chosen`` events seen by that seat only); then all are revealed
together and the starting hands are dealt.

A drafting ruleset provides ``roster(g)``, ``lord_candidates(g, roster)``, ``draft_sizes(g)``
(lord's random extras, the most offered to others), ``public_lord(g)``, ``seat_general`` and
``deal_hands`` (see :class:`DraftRules`).
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from ..core.engine import answer, ask, emit, handler, pop, shuffle
from ..core.events import DraftOffered, GeneralChosen
from ..core.ruleset import General, ruleset_of
from ..core.state import Frame, Game


class DraftRules(Protocol):
    """What the draft asks of its ruleset."""

    def roster(self, g: Game) -> dict[str, General]:
        """The draftable generals."""

    def lord_candidates(self, g: Game, roster: dict[str, General]) -> list[str]:
        """The generals always offered to the lord."""

    def draft_sizes(self, g: Game) -> tuple[int, int]:
        """(random generals added to the lord's offer, the most offered to each other seat)."""

    def public_lord(self, g: Game) -> bool:
        """Whether the lord picks first and publicly (False: with the others, in secret)."""

    def shared_draft(self, g: Game) -> bool:
        """For a secret lord: whether every seat, the lord too, is dealt from one pool (no
        lord offer, which would tell the lord by the generals it holds)."""

    def seat_general(self, g: Game, seat: int, gen: General) -> None:
        """Give ``seat`` its general and announce it publicly."""

    def deal_hands(self, g: Game) -> None:
        """Deal the starting hands once every general is known."""


class Draft(Frame, tag="draft"):
    """The draft in progress: offers and picks by seat; ``order`` the seats after the lord."""

    offers: list[list[str]] = msgspec.field(default_factory=list)
    picks: list[str] = msgspec.field(default_factory=list)
    order: list[int] = msgspec.field(default_factory=list)
    lord: int = 0
    i: int = 0


def _shuffled(g: Game, names: list[str]) -> list[str]:
    return [names[i] for i in shuffle(g, list(range(len(names))))]


def _offer(g: Game, f: Draft, seat: int) -> None:
    ask(
        g,
        seat,
        "draft",
        [f"general:{x}" for x in f.offers[seat]],
        declinable=False,
        info={"offer": list(f.offers[seat])},
    )


def _rules(g: Game) -> DraftRules:
    rs = ruleset_of(g)
    assert hasattr(rs, "roster"), f"{g.ruleset} does not draft"
    return rs  # type: ignore[return-value]


def _secret_pick(g: Game, seat: int, gen: General) -> None:
    emit(
        g,
        GeneralChosen(
            seat=seat,
            general=gen.name,
            gender=gen.gender,
            faction=gen.faction,
            max_hp=gen.hp,
            hp=gen.hp,
            seen_by=[seat],
        ),
    )


def _deal_others(g: Game, f: Draft, pool: list[str], seats: list[int]) -> None:
    """Offer each of ``seats`` its share of ``pool`` (A-002-04's k) and ask the first."""
    others = [s for s in seats if s != f.lord]
    k = min(_rules(g).draft_sizes(g)[1], len(pool) // max(len(others), 1))
    for j, s in enumerate(others):
        f.offers[s] = pool[j * k : (j + 1) * k]
    for s in seats:
        emit(g, DraftOffered(seat=s, generals=f.offers[s], seen_by=[s]))
    f.order = seats
    f.pc = 2
    f.i = 0
    if f.order:
        _offer(g, f, f.order[0])


@handler(Draft)
def _draft(g: Game, f: Draft) -> None:
    rs = _rules(g)
    roster = rs.roster(g)
    n = len(g.players)
    if f.pc == 0:
        f.pc = 1
        f.offers = [[] for _ in range(n)]
        f.picks = [""] * n
        if not rs.public_lord(g) and rs.shared_draft(g):
            f.lord = -1  # nobody is dealt apart: no seat's offer differs from the others'
            _deal_others(g, f, _shuffled(g, list(roster)), list(range(n)))
            return
        f.lord = next(p.seat for p in g.players if p.role == "lord")
        cands = rs.lord_candidates(g, roster)
        others = [x for x in roster if x not in cands]
        extra, _ = rs.draft_sizes(g)
        offer = list(cands) + _shuffled(g, others)[:extra]
        f.offers[f.lord] = offer
        if not rs.public_lord(g):  # a secret lord picks with everyone, in seat order
            _deal_others(g, f, _shuffled(g, [x for x in roster if x not in offer]), list(range(n)))
            return
        emit(g, DraftOffered(seat=f.lord, generals=offer, seen_by=[f.lord]))
        _offer(g, f, f.lord)
        return
    if f.pc == 1:
        f.picks[f.lord] = answer(g)[0][8:]
        rs.seat_general(g, f.lord, roster[f.picks[f.lord]])
        pool = _shuffled(g, [x for x in roster if x != f.picks[f.lord]])
        _deal_others(g, f, pool, [(f.lord + k) % n for k in range(1, n)])
        return
    if f.pc == 2 and f.i < len(f.order):
        s = f.order[f.i]
        f.picks[s] = answer(g)[0][8:]
        _secret_pick(g, s, roster[f.picks[s]])
        f.i += 1
        if f.i < len(f.order):
            _offer(g, f, f.order[f.i])
            return
    for s in sorted(f.order):  # all secret picks are revealed together
        rs.seat_general(g, s, roster[f.picks[s]])
    rs.deal_hands(g)
    pop(g)
