"""Seed 000 data: the 20 characters (REFERENCE §3.2), the seed's skill names as aliases of the
standard skills (§3.3), and the printed names of cards and roles."""

from __future__ import annotations

from functools import cache

from ...core.ruleset import General
from ...skills.base import alias

# seed name -> (standard skill, the seed's text); the same-named ones need no alias
SKILL_ALIASES: dict[str, tuple[str, str]] = {
    "好色": ("奸雄", "可以立即获得造成伤害的牌。"),
    "护主": (
        "护驾",
        "主人技，当需要使用（或打出）一张【闪】时，可以发动护主。所有宁国府势力角色"
        "按行动顺序依次选择是否打出“提供”一张【闪】。",
    ),
    "醉骂": (
        "烈弓",
        "出牌阶段，以下两种情况，使用的【杀】不可被闪避：目标角色的手牌数大于或等于"
        "你的体力值，或小于或等于你的攻击范围。",
    ),
    "兼美": (
        "洛神",
        "回合开始阶段，可以进行判定：若为黑色，立即获得此生效后的判定牌，并可以再次"
        "使用——如此反复，直到出现红色或不愿意判定了为止。",
    ),
    "应怜": ("闭月", "回合结束阶段，可以摸一张牌。"),
    "噬血": (
        "狂骨",
        "锁定技，任何时候，你对于距离为1以内的任何一名角色造成1点伤害，你回复1点体力。",
    ),
    "嫉妒": ("英姿", "摸牌阶段，可以额外摸一张牌。"),
    "葬花": ("青囊", "出牌阶段，可以主动弃掉一张手牌，令任一目标角色回复1点体力。每回合限用一次。"),
    "醉卧": (
        "无双",
        "锁定技，使用【杀】时，目标角色需连续使用两张【闪】才能抵消；进行【决斗】的"
        "角色每次需连续打出两张【杀】。",
    ),
    "冷面": (
        "铁骑",
        "当使用【杀】指定一名角色为目标后，可以进行判定，若结果为红色，此【杀】不可被闪避。",
    ),
    "优伶": ("龙胆", "可以将手牌的【杀】当【闪】、【闪】当【杀】使用或打出。"),
}
# where the seed's text behaves differently, the alias changes a class attribute only
ALIAS_ATTRS: dict[str, dict[str, object]] = {
    "护主": {"others_key": "huzhu_others_only"},
    "醉骂": {"optional": False, "optional_key": "zuima_optional"},
    "噬血": {"self_key": "shixue_self"},
}

for _new, (_old, _text) in SKILL_ALIASES.items():
    alias(_new, _old, _text, **ALIAS_ATTRS.get(_new, {}))

NING = "宁国府"
XUE = "薛府"
QUN = "群"
M, F = "male", "female"

# name, faction, novel gender (A-000-02), HP, skills, lord candidate, the source general's gender
CHARACTERS: tuple[tuple[str, str, str, int, tuple[str, ...], bool, str], ...] = (
    ("贾珍", NING, M, 4, ("好色", "护主"), True, M),
    ("贾蓉", NING, M, 3, ("反馈", "鬼才"), False, M),
    ("尤三姐", NING, F, 4, ("刚烈",), False, M),
    ("焦大", NING, M, 4, ("醉骂",), False, M),
    ("惜春", NING, F, 4, ("裸衣",), False, M),
    ("尤二姐", NING, F, 3, ("天妒", "遗计"), False, M),
    ("秦可卿", NING, F, 3, ("倾国", "兼美"), False, F),
    ("薛姨妈", XUE, F, 4, ("制衡", "救援"), True, M),
    ("宝蟾", XUE, F, 4, ("奇袭",), False, M),
    ("香菱", XUE, F, 3, ("离间", "应怜"), False, F),
    ("薛蟠", XUE, M, 4, ("噬血",), False, M),
    ("夏金桂", XUE, F, 3, ("嫉妒", "反间"), False, M),
    ("薛宝琴", XUE, F, 3, ("国色", "流离"), False, F),
    ("薛蝌", XUE, M, 3, ("谦逊", "连营"), False, M),
    ("薛宝钗", XUE, F, 3, ("结姻", "枭姬"), False, F),
    ("林黛玉", QUN, F, 3, ("急救", "葬花"), False, M),
    ("史湘云", QUN, F, 4, ("醉卧",), False, M),
    ("柳湘莲", QUN, M, 4, ("马术", "冷面"), False, M),
    ("蒋玉涵", QUN, M, 4, ("优伶",), False, M),
    ("妙玉", QUN, F, 4, ("克己",), False, M),
)
LORD_CANDIDATES = ("贾珍", "薛姨妈")


# the seed's skill texts as option values (REFERENCE Appendix A-000-xx): honglou's defaults, and
# what the characters' skills follow in a ruleset that has no such option (jinyu, extended …)
SEED_TEXTS: dict[str, bool] = {
    "huzhu_others_only": True,  # A-000-03
    "ganglie_short_hand_discards": False,  # A-000-04
    "zuima_optional": False,  # A-000-05
    "tiandu_any_judgement": False,  # A-000-06
    "jiuyuan_literal": False,  # A-000-07
    "fanjian_damage_first": True,  # A-000-08
    "zanghua_wounded_only": True,  # A-000-09
    "shixue_self": False,  # A-000-11
    "luoyi_play_phase_only": True,  # D-000-04
}


@cache
def characters(source_genders: bool = False) -> dict[str, General]:
    """The 20 characters by name (genders from the novel, or from the copied general), their
    skills printed with the seed's texts (``SEED_TEXTS``) in every ruleset."""
    return {
        name: General(
            name, fac, src if source_genders else gender, hp, skills, lord, texts=SEED_TEXTS
        )
        for name, fac, gender, hp, skills, lord, src in CHARACTERS
    }


# printed name -> engine name (cards, roles and the lord-skill label)
NAMES: dict[str, str] = {
    "药": "桃",
    "护官符": "八卦阵",
    "鸳鸯剑": "雌雄双股剑",
    "连弩": "诸葛连弩",
    "青龙刀": "青龙偃月刀",
    "画戟": "方天画戟",
    "主人": "lord",
    "仆人": "loyalist",
    "主人技": "主公技",
    "蒋玉菡": "蒋玉涵",
}
PRINTED: dict[str, str] = {v: k for k, v in NAMES.items() if k != "蒋玉菡"}
