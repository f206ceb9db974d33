"""Card data: the physical card table of a game and the standard deck loaded from package data."""

from __future__ import annotations

import csv
from functools import cache
from importlib import resources

import msgspec

SUITS = ("S", "H", "C", "D")
SUIT_SYMBOL = {"S": "♠", "H": "♥", "C": "♣", "D": "♦"}
RANK_TEXT = {1: "A", 11: "J", 12: "Q", 13: "K"}
_SUIT_FROM_CSV = {"spade": "S", "heart": "H", "club": "C", "diamond": "D"}


class CardDef(msgspec.Struct, frozen=True, array_like=True):
    """One physical card: its printed name, suit, rank, type and subtype."""

    name: str
    suit: str  # S H C D, or "" for none
    rank: int  # 1..13, 0 for none
    type: str  # basic, trick, equip
    subtype: str  # attack, defense, recover, buff, normal_trick, delayed_trick, weapon, armor, ...
    pack: str = "standard"


def color_of(suit: str) -> str:
    """``red`` for ♥♦, ``black`` for ♠♣, ``none`` for a suitless card."""
    return COLORS.get(suit, "none")


COLORS = {"H": "red", "D": "red", "S": "black", "C": "black"}
"""The colour of each suit (a suitless card is ``none``)."""


def rank_text(rank: int) -> str:
    """A rank as printed: A, 2..10, J, Q, K."""
    return RANK_TEXT.get(rank, str(rank))


def notation(card: CardDef) -> str:
    """The scenario notation of a card: ``杀 S7``."""
    return f"{card.name} {card.suit}{rank_text(card.rank)}"


@cache
def standard_deck() -> tuple[CardDef, ...]:
    """The 160 standard, EX and 军争 cards, in the order of ``standard_deck.csv``."""
    text = (
        resources.files(__package__.rsplit(".", 1)[0] + ".cards")
        .joinpath("standard_deck.csv")
        .read_text(encoding="utf-8")
    )
    out = []
    for row in csv.DictReader(text.splitlines()):
        out.append(
            CardDef(
                name=row["name_zh"],
                suit=_SUIT_FROM_CSV[row["suit"]],
                rank=int(row["rank"]),
                type=row["type"],
                subtype=row["subtype"],
                pack=row["pack"],
            )
        )
    return tuple(out)
