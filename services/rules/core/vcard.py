"""Virtual cards: what a use or a play is "as" — name, suit, colour, rank and the physical cards."""

from __future__ import annotations

import msgspec

from .cards import COLORS, color_of
from .state import Game


class VCard(msgspec.Struct, kw_only=True):
    """A card as used or played: one physical card, several converted ones, or none (视为)."""

    name: str
    suit: str = ""
    color: str = "none"
    rank: int = 0
    cards: list[int] = msgspec.field(default_factory=list)
    skill: str = ""
    # effects a ruleset attaches to this use or play (a 强化 杀 is tagged ``slash`` …)
    tags: list[str] = msgspec.field(default_factory=list)


def physical(g: Game, cid: int) -> VCard:
    """The card ``cid`` as itself."""
    c = g.cards[cid]
    return VCard(
        name=c.name, suit=c.suit, color=COLORS.get(c.suit, "none"), rank=c.rank, cards=[cid]
    )


_PROBES: dict[str, tuple[VCard, ...]] = {}


def probes(g: Game) -> tuple[VCard, ...]:
    """Every card of the game's table as itself (:func:`physical`), made once per table: to
    ask questions with (may it be used now?), never to change or to keep."""
    found = _PROBES.get(g.deck)
    if found is None:
        found = _PROBES[g.deck] = tuple(physical(g, c) for c in range(len(g.cards)))
    return found


def converted(g: Game, name: str, cards: list[int], skill: str) -> VCard:
    """``cards`` used or played as ``name`` (§1.8): one card keeps its suit, colour and rank;
    several keep a common colour only; none is colourless."""
    if len(cards) == 1:
        c = g.cards[cards[0]]
        return VCard(
            name=name,
            suit=c.suit,
            color=color_of(c.suit),
            rank=c.rank,
            cards=list(cards),
            skill=skill,
        )
    colors = {color_of(g.cards[c].suit) for c in cards}
    color = colors.pop() if len(colors) == 1 else "none"
    return VCard(name=name, color=color, cards=list(cards), skill=skill)


SLASHES = ("杀", "火杀", "雷杀")


def is_slash(name: str) -> bool:
    """Whether a card name is a 杀 of any nature."""
    return name in SLASHES


def nature_of(name: str) -> str:
    """Damage nature of a 杀 by its name."""
    return "fire" if name == "火杀" else "thunder" if name == "雷杀" else "normal"


def matches(need: str, name: str) -> bool:
    """Whether a card named ``name`` satisfies a demand for ``need`` (any 杀 answers 杀)."""
    return name == need or (need == "杀" and name in SLASHES)
