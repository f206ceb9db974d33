"""Seed 002 data: the general tiers (U-002-02 — the seed splits generals into three strength tiers
but names none; this table is ours, editable data) and the option defaults."""

from __future__ import annotations

# general -> tier (1 strongest); the 红楼梦 characters take their source general's tier
GENERAL_TIERS: dict[str, int] = {
    # tier 1
    "刘备": 1,
    "孙权": 1,
    "郭嘉": 1,
    "司马懿": 1,
    "诸葛亮": 1,
    "黄月英": 1,
    "华佗": 1,
    "貂蝉": 1,
    "周瑜": 1,
    "甄姬": 1,
    # tier 2
    "曹操": 2,
    "张辽": 2,
    "夏侯惇": 2,
    "赵云": 2,
    "马超": 2,
    "黄盖": 2,
    "孙尚香": 2,
    "陆逊": 2,
    "大乔": 2,
    # tier 3
    "许褚": 3,
    "关羽": 3,
    "张飞": 3,
    "甘宁": 3,
    "吕蒙": 3,
    "吕布": 3,
    "黄忠": 3,
    "魏延": 3,
    # 红楼梦 (seed 000) characters
    "薛姨妈": 1,
    "尤二姐": 1,
    "贾蓉": 1,
    "林黛玉": 1,
    "香菱": 1,
    "夏金桂": 1,
    "秦可卿": 1,
    "贾珍": 2,
    "尤三姐": 2,
    "柳湘莲": 2,
    "蒋玉涵": 2,
    "薛宝钗": 2,
    "薛蝌": 2,
    "薛宝琴": 2,
    "惜春": 3,
    "宝蟾": 3,
    "妙玉": 3,
    "史湘云": 3,
    "焦大": 3,
    "薛蟠": 3,
}

DEFAULTS: dict[str, object] = {
    "mougong": False,  # the 谋攻 module
    "double_renegade": False,  # A-002-02
    "maneuvering": True,  # A-002-01: standard + EX + 军争 (160); False = the 108 cards
    "pool": "standard",  # the 27 standard generals; "honglou" the 20 红楼梦 characters; "all" both;
    # "vanilla" the seed's game without generals (everyone 4 HP, no skills; the lord 5 and 2 玉佩)
    "tier": 0,  # U-002-02: 1, 2 or 3 plays that tier only (GENERAL_TIERS); 0 = all
    "lord_extra_random": 2,  # A-002-03
    "draft_max_offer": 6,  # §5.1 step 3 (A-002-04 shrinks it for small pools)
    "draft_max_offer_10p": 3,
    "armor_cap": 5,  # A-002-07
    "jade_cap": 0,  # A-002-08 yupei_cap; 0 = none
    "overheal_to_jade": "enhanced_peach_only",  # A-002-08: never | enhanced_peach_only | always
    "loyalist_penalty_scope": "any",  # A-002-06: any | allies_only
    "lightning_passes_on_death": True,  # A-002-05
    # 谋攻 (mougong.py)
    "rage_cap": 0,  # U-002-04; 0 = none
    "rage_per_point": False,  # A-002-10: +1 per event (True: per point of damage / HP loss)
    "insight_renegades_same_camp": False,  # A-002-11
    "enhanced_wine_scope": "turn",  # A-002-15: turn | play_phase
    "enhanced_peach_full_hp": "max_hp_then_jade",  # A-002-14: max_hp_then_jade | jade_only
    "mougong_hidden_lord": True,  # A-002-18
    # the hidden lord's draft: "shared" — every seat, the lord too, is dealt from one shuffled
    # pool (a lord-only offer of the lord-skill generals would name the lord when one is
    # picked); "lord_offer" — the base rules' lord offer (A-002-03), which gives the lord away
    "mougong_draft": "shared",
    "disguised_rebel_draw": 2,  # U-002-05
}

CHOICES: dict[str, tuple[object, ...] | range] = {
    "pool": ("standard", "honglou", "all", "vanilla"),
    "tier": (0, 1, 2, 3),
    "lord_extra_random": range(0, 48),
    "draft_max_offer": range(1, 48),
    "draft_max_offer_10p": range(1, 48),
    "armor_cap": range(0, 1000),
    "jade_cap": range(0, 1000),
    "overheal_to_jade": ("never", "enhanced_peach_only", "always"),
    "loyalist_penalty_scope": ("any", "allies_only"),
    "rage_cap": range(0, 1000),
    "enhanced_wine_scope": ("turn", "play_phase"),
    "enhanced_peach_full_hp": ("max_hp_then_jade", "jade_only"),
    "mougong_draft": ("shared", "lord_offer"),
    "disguised_rebel_draw": range(0, 100),
}
