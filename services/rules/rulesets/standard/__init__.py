"""Ruleset ``standard``: standard identity mode (REFERENCE §1), vanilla generals by default.

Options (REFERENCE Appendix A):

* ``generals`` ("vanilla"): "standard" (or "draft") drafts the 25 standard generals plus 黄忠
  and 魏延 (``generals.py``; REFERENCE §1.4 protocol through ``rulesets/draft.py``: the lord gets the
  lord-skill generals + ``draft_lord_random`` random ones and picks publicly, the others get
  ``draft_max_offer`` each (2 at 10 players) and pick in secret).
* ``draft_lord_random`` (2), ``draft_max_offer`` (3): the draft's numbers.

* ``double_renegade`` (False): the alternative 6- and 8-player role lines with two renegades.
* ``maneuvering`` (True): add the 52 军争 cards to the 108 standard + EX cards.
* ``lord_bonus_min_players`` (0): A-STD-01; 5 gives FreeKill's "no +1 HP in a 4-player game".

Every ruleset also takes the options of ``core/options.py`` (``max_reshuffles``, A-STD-03's
``chain_hit_effects``, A-STD-04's ``equip_slash_keeps_range``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import skills as _skills  # noqa: F401  (registers the general skills)
from ...core.cards import CardDef, standard_deck
from ...core.engine import emit, push, shuffle
from ...core.events import RoleAssigned
from ...core.flow import GameFrame
from ...core.index import skills_changed
from ...core.ruleset import (
    VANILLA,
    General,
    Ruleset,
    announce_general,
    announce_start,
    register_ruleset,
)
from ...core.state import Game
from ...core.zones import draw
from ..draft import Draft, seen_in_draft
from .generals import standard_generals

ROLE_TABLE: dict[int, tuple[int, int, int]] = {  # players -> loyalists, rebels, renegades
    4: (1, 1, 1),
    5: (1, 2, 1),
    6: (1, 3, 1),
    7: (2, 3, 1),
    8: (2, 4, 1),
    9: (3, 4, 1),
    10: (3, 4, 2),
}
ALT_TABLE = {6: (1, 2, 2), 8: (2, 3, 2)}


def role_cards(players: int, double_renegade: bool) -> list[str]:
    """The role cards for a table (lord first)."""
    loyal, rebel, rene = (ALT_TABLE if double_renegade and players in ALT_TABLE else ROLE_TABLE)[
        players
    ]
    return ["lord"] + ["loyalist"] * loyal + ["rebel"] * rebel + ["renegade"] * rene


@register_ruleset
class Standard(Ruleset):
    """Standard identity mode, vanilla generals (4 HP; lord 5)."""

    name = "standard"
    defaults = {
        "double_renegade": False,
        "maneuvering": True,
        "lord_bonus_min_players": 0,
        "generals": "vanilla",
        "draft_lord_random": 2,
        "draft_max_offer": 3,
    }
    choices = {
        "lord_bonus_min_players": range(0, 11),
        "generals": ("vanilla", "standard", "draft"),  # "draft" = "standard" (extended's word)
        "draft_lord_random": range(0, 28),
        "draft_max_offer": range(1, 28),
    }

    def generals(self, options: Mapping[str, Any] | None = None) -> dict[str, General]:
        return {"vanilla": VANILLA, **standard_generals()}

    def deck(self, options: dict[str, Any]) -> list[CardDef]:
        full = standard_deck()
        if options.get("maneuvering", True):
            return list(full)
        return [c for c in full if c.pack != "maneuvering"]

    def roles(self, players: int, options: dict[str, Any]) -> list[str]:
        return role_cards(players, bool(options.get("double_renegade")))

    def pick_generals(self, g: Game) -> list[General]:
        """Vanilla generals for every seat (rulesets with generals draft instead)."""
        return [VANILLA] * len(g.players)

    def setup(self, g: Game) -> None:
        if g.options.get("generals", "vanilla") != "vanilla":
            self.setup_drafted(g)
            return
        n = len(g.players)
        roles = self.roles(n, g.options)
        rest = shuffle(g, list(range(1, len(roles))))
        dealt = ["lord"] + [roles[i] for i in rest]
        announce_start(g)
        for seat, role in enumerate(dealt):
            g.players[seat].role = role
            g.players[seat].role_revealed = role == "lord"
            emit(g, RoleAssigned(seat=seat, role=role, seen_by=None if role == "lord" else [seat]))
        skills_changed(g)  # lord skills follow the role
        for seat, gen in enumerate(self.pick_generals(g)):
            self.seat_general(g, seat, gen)
        self.deal(g)
        push(g, GameFrame(seat=0))

    def seat_general(self, g: Game, seat: int, gen: General) -> None:
        """Give ``seat`` its general, with the lord's extra max HP, and announce it."""
        p = g.players[seat]
        bonus = self.lord_bonus(g) if p.role == "lord" else 0
        p.general, p.gender, p.faction = gen.name, gen.gender, gen.faction
        p.max_hp = p.hp = gen.hp + bonus
        p.skills = list(gen.skills)
        skills_changed(g, seat)
        announce_general(g, seat)

    def deal(self, g: Game, per_seat: int = 4) -> None:
        """Shuffle the deck into the draw pile and deal ``per_seat`` cards to everyone."""
        g.draw = shuffle(g, list(range(len(g.cards))))
        for p in g.players:
            self.deal_to(g, p.seat, per_seat)

    # --- the draft (rulesets/draft.py) --------------------------------------------------------
    def deal_roles(self, g: Game) -> None:
        """Deal the role cards at random, the lord to seat 0 and revealed at once."""
        n = len(g.players)
        roles = self.roles(n, g.options)
        rest = shuffle(g, list(range(1, len(roles))))
        dealt = ["lord"] + [roles[i] for i in rest]
        for seat, role in enumerate(dealt):
            g.players[seat].role = role
            g.players[seat].role_revealed = role == "lord"
            emit(g, RoleAssigned(seat=seat, role=role, seen_by=None if role == "lord" else [seat]))
        skills_changed(g)  # lord skills follow the role

    def setup_drafted(self, g: Game, draft: bool = True) -> None:
        """Roles, a shuffled draw pile, then the draft (hands are dealt once it is over); with
        ``draft`` false, ``pick_generals`` seats everyone and the hands are dealt at once."""
        announce_start(g)
        self.deal_roles(g)
        g.draw = shuffle(g, list(range(len(g.cards))))  # dealt once the draft is over
        push(g, GameFrame(seat=self.first_seat(g)))
        if draft:
            push(g, Draft())
            return
        for seat, gen in enumerate(self.pick_generals(g)):
            self.seat_general(g, seat, gen)
        self.deal_hands(g)

    def first_seat(self, g: Game) -> int:
        """Who takes the first turn (the lord, seat 0)."""
        return 0

    def roster(self, g: Game) -> dict[str, General]:
        """The draftable generals."""
        return standard_generals()

    def general_pool(self, g: Game) -> list[str]:
        """The draft's roster (what its offers are dealt from)."""
        return list(self.roster(g))

    def seen_generals(self, g: Game, seat: int) -> set[str]:
        """Every seated general, and in a draft the seat's own offer."""
        return super().seen_generals(g, seat) | seen_in_draft(g, seat)

    def lord_candidates(self, g: Game, roster: dict[str, General]) -> list[str]:
        """The generals with a lord skill (曹操, 刘备, 孙权)."""
        return [n for n, x in roster.items() if x.lord]

    def draft_sizes(self, g: Game) -> tuple[int, int]:
        """(random extras for the lord, the most offered to each other seat)."""
        most = int(g.options.get("draft_max_offer", 3))
        if len(g.players) >= 10 and g.ruleset == "standard":
            most = min(most, 2)  # §1.4: 2 each in a 10-player game
        return int(g.options.get("draft_lord_random", 2)), most

    def public_lord(self, g: Game) -> bool:
        """The lord picks first, face up."""
        return True

    def shared_draft(self, g: Game) -> bool:
        """A public lord has its own offer (only a hidden lord's draft may be shared)."""
        return False

    def deal_hands(self, g: Game) -> None:
        """Deal the starting hands (4 each) from the shuffled draw pile."""
        for p in g.players:
            self.deal_to(g, p.seat, self.starting_hand(g, p.seat))

    def starting_hand(self, g: Game, seat: int) -> int:
        """How many cards ``seat`` starts with."""
        return 4

    def deal_to(self, g: Game, seat: int, n: int) -> None:
        """Deal ``n`` cards from the draw pile to ``seat`` (seen by it only)."""
        draw(g, seat, n, reason="deal")
