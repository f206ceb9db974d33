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


ENGLISH_NAMES: dict[str, str] = {
    # basic cards
    "杀": "Slash",
    "火杀": "Fire Slash",
    "雷杀": "Thunder Slash",
    "闪": "Dodge",
    "桃": "Peach",
    "酒": "Analeptic",
    # tricks
    "决斗": "Duel",
    "过河拆桥": "Dismantlement",
    "顺手牵羊": "Snatch",
    "无中生有": "Ex Nihilo",
    "借刀杀人": "Collateral",
    "无懈可击": "Nullification",
    "南蛮入侵": "Savage Assault",
    "万箭齐发": "Archery Attack",
    "桃园结义": "God Salvation",
    "五谷丰登": "Amazing Grace",
    "火攻": "Fire Attack",
    "铁索连环": "Iron Chain",
    "乐不思蜀": "Indulgence",
    "闪电": "Lightning",
    "兵粮寸断": "Supply Shortage",
    "走马换将": "Change of Generals",
    "白鸽": "White Dove",
    # weapons
    "诸葛连弩": "Zhuge Crossbow",
    "青釭剑": "Qinggang Sword",
    "雌雄双股剑": "Double Swords",
    "青龙偃月刀": "Green Dragon Blade",
    "丈八蛇矛": "Serpent Spear",
    "贯石斧": "Rock Cleaving Axe",
    "方天画戟": "Sky Piercing Halberd",
    "麒麟弓": "Kylin Bow",
    "寒冰剑": "Ice Sword",
    "古锭刀": "Guding Blade",
    "朱雀羽扇": "Vermilion Feather Fan",
    # armour
    "八卦阵": "Eight Diagram",
    "仁王盾": "Nioh Shield",
    "藤甲": "Vine Armour",
    "白银狮子": "Silver Lion",
    # horses (+1 / -1)
    "赤兔": "Red Hare",
    "大宛": "Dayuan",
    "紫骍": "Zixing",
    "的卢": "Dilu",
    "绝影": "Jueying",
    "爪黄飞电": "Zhuahuang Feidian",
    "骅骝": "Hualiu",
    # the names 红楼梦 prints for some of them (Ruleset.display_name)
    "药": "Medicine",
    "护官符": "Protective Charm",
    "画戟": "Painted Halberd",
    "连弩": "Repeating Crossbow",
    "鸳鸯剑": "Mandarin Duck Swords",
    "青龙刀": "Green Dragon Sword",
}
"""Each card's English name, by its Chinese name (printed or the engine's): the names English
players know the standard cards by (Slash, Dodge, Peach, Analeptic, Nullification …), shown on
English pages and in English labels. Generals and skills keep their Chinese names."""


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
