"""Public card knowledge a policy may use: the printed card table of a ruleset (the id → face map is
the same for every game with the same ruleset and options; secrecy lies in which ids a seat sees),
weapon ranges, and how much a policy values keeping a card.

What a card is (a 杀, hostile to its target, harmful, helpful, aimed at every other seat, which
slot it takes) is read from the rules' card registry (`api.card_uses`, `api.SLASHES`,
`api.EQUIP_SLOTS`), never written here again; what it is worth to a policy (the values below) is
the bots' own judgement."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from ..rules.api import (
    EQUIP_SLOTS,
    RANGE_OF_WEAPON,
    RULESETS,
    SKILLS,
    CardDef,
    card_uses,
)
from ..rules.api import SLASHES as SLASHES  # every 杀 (the policies import it from here)

_USES = card_uses()
_TRICK_KINDS = ("trick", "delayed")
HOSTILE_CARDS = frozenset(n for n, u in _USES.items() if u.stance == "hostile")
"""Cards that hurt the one target their user picks (every 杀, 决斗, 乐不思蜀 …)."""
HARMFUL_TRICKS = frozenset(
    n for n, u in _USES.items() if u.kind in _TRICK_KINDS and u.stance in ("hostile", "harmful")
)
"""Tricks (delayed ones too) that hurt their targets."""
HELPFUL_TRICKS = frozenset(
    n for n, u in _USES.items() if u.kind in _TRICK_KINDS and u.stance == "helpful"
)
AOE = frozenset(n for n, u in _USES.items() if u.every_other and u.stance == "harmful")
"""Harmful tricks aimed at every other seat (南蛮入侵, 万箭齐发)."""
BAD_JUDGE = frozenset(n for n, u in _USES.items() if u.kind == "delayed" and u.stance == "hostile")
"""Delayed tricks that hurt the seat whose judgement area holds them (乐不思蜀, 兵粮寸断)."""
SLOT_OF = EQUIP_SLOTS
ARMOR_VALUE = {"八卦阵": 6.0, "仁王盾": 5.5, "藤甲": 4.0, "白银狮子": 5.0}
BASE_VALUE = {
    "桃": 10.0,
    "无懈可击": 8.0,
    "无中生有": 9.0,
    "闪": 7.0,
    "酒": 4.0,
    "杀": 5.0,
    "火杀": 5.2,
    "雷杀": 5.2,
    "决斗": 6.0,
    "顺手牵羊": 7.0,
    "过河拆桥": 6.5,
    "南蛮入侵": 5.5,
    "万箭齐发": 5.5,
    "乐不思蜀": 7.0,
    "兵粮寸断": 5.0,
    "借刀杀人": 3.5,
    "火攻": 3.0,
    "铁索连环": 2.5,
    "五谷丰登": 3.0,
    "桃园结义": 4.0,
    "闪电": 1.0,
}


@cache
def _table(ruleset: str, options_json: str) -> tuple[CardDef, ...]:
    return tuple(RULESETS[ruleset].deck(json.loads(options_json)))


def card_table(ruleset: str, options: dict[str, Any]) -> tuple[CardDef, ...]:
    """The printed cards of a game of ``ruleset`` with ``options`` (public data)."""
    return _table(ruleset, json.dumps(options, sort_keys=True, default=str))


def weapon_range(name: str) -> int:
    """A weapon's attack range (1 for unknown names)."""
    return RANGE_OF_WEAPON.get(name, 1)


def equip_value(c: CardDef) -> float:
    """How much an equipment card is worth in its slot."""
    if c.subtype == "weapon":
        return 2.0 + weapon_range(c.name) * 0.6 + (2.0 if c.name == "诸葛连弩" else 0.0)
    if c.subtype == "armor":
        return ARMOR_VALUE.get(c.name, 4.0)
    return 4.0 if c.subtype == "defensive_horse" else 3.5


def keep_value(c: CardDef, dup: int = 0) -> float:
    """How much a hand card is worth keeping; ``dup`` = same-named cards already counted."""
    if c.type == "equip":
        return equip_value(c) * 0.8
    v = BASE_VALUE.get(c.name, 3.0)
    if dup and (c.name in SLASHES or c.name in ("闪", "酒")):
        v -= 2.5 * min(dup, 2)
    return v


def std_skill(name: str) -> str:
    """The standard name of a skill printed under another name (葬花 → 青囊), else ``name``."""
    sk = SKILLS.get(name)
    if sk is None:
        return name
    base = type(sk).__mro__[1].__dict__.get("name", "")
    return base if isinstance(base, str) and base in SKILLS else name
