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

from typing import TYPE_CHECKING, Protocol

import msgspec

from ..core.engine import answer, ask, emit, pop, shuffle
from ..core.events import DraftOffered
from ..core.keys import general_key, general_of
from ..core.registry import ruleset_of
from ..core.ruleset import General, announce_general
from ..core.state import Frame, Game

if TYPE_CHECKING:
    from ..core.redeal import Redeal


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

    def start(self, g: Game) -> None:
        """The lord's offer: its candidates and some random generals."""
        rs = _rules(g)
        roster = rs.roster(g)
        n = len(g.players)
        self.offers = [[] for _ in range(n)]
        self.picks = [""] * n
        if not rs.public_lord(g) and rs.shared_draft(g):
            self.lord = -1  # nobody is dealt apart: no seat's offer differs from the others'
            self.deal_others(g, _shuffled(g, list(roster)), list(range(n)))
            return
        self.lord = next(p.seat for p in g.players if p.role == "lord")
        cands = rs.lord_candidates(g, roster)
        others = [x for x in roster if x not in cands]
        extra, _ = rs.draft_sizes(g)
        offer = list(cands) + _shuffled(g, others)[:extra]
        self.offers[self.lord] = offer
        if not rs.public_lord(g):  # a secret lord picks with everyone, in seat order
            pool = _shuffled(g, [x for x in roster if x not in offer])
            self.deal_others(g, pool, list(range(n)))
            return
        self.then(self.lord_picked)
        emit(g, DraftOffered(seat=self.lord, generals=offer, seen_by=[self.lord]))
        self.offer(g, self.lord)

    def lord_picked(self, g: Game) -> None:
        """The lord's pick is public; the others are offered the rest."""
        rs = _rules(g)
        roster = rs.roster(g)
        n = len(g.players)
        self.picks[self.lord] = general_of(answer(g)[0])
        rs.seat_general(g, self.lord, roster[self.picks[self.lord]])
        pool = _shuffled(g, [x for x in roster if x != self.picks[self.lord]])
        self.deal_others(g, pool, [(self.lord + k) % n for k in range(1, n)])

    def deal_others(self, g: Game, pool: list[str], seats: list[int]) -> None:
        """Offer each of ``seats`` its share of ``pool`` (A-002-04's k) and ask the first."""
        others = [s for s in seats if s != self.lord]
        k = min(_rules(g).draft_sizes(g)[1], len(pool) // max(len(others), 1))
        for j, s in enumerate(others):
            self.offers[s] = pool[j * k : (j + 1) * k]
        for s in seats:
            emit(g, DraftOffered(seat=s, generals=self.offers[s], seen_by=[s]))
        self.order = seats
        self.then(self.picked)
        self.i = 0
        if self.order:
            self.offer(g, self.order[0])

    def offer(self, g: Game, seat: int) -> None:
        """Ask ``seat`` to pick one of its offer."""
        ask(
            g,
            seat,
            "draft",
            [general_key(x) for x in self.offers[seat]],
            declinable=False,
            info={"offer": list(self.offers[seat])},
        )

    def picked(self, g: Game) -> None:
        """A secret pick; when every seat has picked, all are revealed together."""
        rs = _rules(g)
        roster = rs.roster(g)
        if self.i < len(self.order):
            s = self.order[self.i]
            self.picks[s] = general_of(answer(g)[0])
            _secret_pick(g, s, roster[self.picks[s]])
            self.i += 1
            if self.i < len(self.order):
                self.offer(g, self.order[self.i])
                return
        for s in sorted(self.order):
            rs.seat_general(g, s, roster[self.picks[s]])
        rs.deal_hands(g)
        pop(g)

    def redeal(self, g: Game, rd: Redeal) -> None:
        """The other seats' offers and secret picks are theirs: each offer is dealt again at its
        size from the generals ``rd.seat`` has not seen (a lord's keeps the lord candidates it
        always has, and a public lord's its pick), and a pick already made is one of the new
        offer. A lord dealt apart in secret is whoever holds the lord's card now."""
        rs = _rules(g)
        cands = rs.lord_candidates(g, rs.roster(g)) if self.lord >= 0 else []
        sizes = [len(o) for o in self.offers]
        if self.lord >= 0 and not rs.public_lord(g):
            lord = next(p.seat for p in g.players if p.role == "lord")
            sizes[self.lord], sizes[lord] = sizes[lord], sizes[self.lord]
            self.lord = lord
            rd.take(cands)  # all in the lord's offer, never in another
        for t, size in enumerate(sizes):
            if t == rd.seat or not size:
                continue
            public_pick = rs.public_lord(g) and t == self.lord
            keep = list(cands) if t == self.lord else []
            if public_pick and self.picks[t] not in keep:
                keep.append(self.picks[t])
            self.offers[t] = keep + rd.generals(g, size - len(keep))
            if self.picks[t] and not public_pick:
                self.picks[t] = self.offers[t][rd.below(size)]


def seen_in_draft(g: Game, seat: int) -> set[str]:
    """The generals ``seat`` has been offered in a draft still running."""
    return {x for fr in g.stack if isinstance(fr, Draft) for x in fr.offers[seat]}


def _shuffled(g: Game, names: list[str]) -> list[str]:
    return [names[i] for i in shuffle(g, list(range(len(names))))]


def _rules(g: Game) -> DraftRules:
    rs = ruleset_of(g)
    assert hasattr(rs, "roster"), f"{g.ruleset} does not draft"
    return rs  # type: ignore[return-value]


def _secret_pick(g: Game, seat: int, gen: General) -> None:
    announce_general(g, seat, gen, seen_by=[seat])
