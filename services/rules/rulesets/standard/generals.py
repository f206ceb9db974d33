"""The 25 standard generals (REFERENCE §2.8, FreeKill ``standard/pkg/init.lua``) plus 黄忠 and
魏延 of the 风 expansion, as data: the skills live once in ``services.rules.skills``."""

from __future__ import annotations

from functools import cache

from ...core.ruleset import General

WEI, SHU, WU, QUN = "魏", "蜀", "吴", "群"
M, F = "male", "female"

# name, faction, gender, HP, skills (lord skills included: active only while lord), lord candidate
GENERALS: tuple[tuple[str, str, str, int, tuple[str, ...], bool], ...] = (
    ("曹操", WEI, M, 4, ("奸雄", "护驾"), True),
    ("司马懿", WEI, M, 3, ("反馈", "鬼才"), False),
    ("夏侯惇", WEI, M, 4, ("刚烈",), False),
    ("张辽", WEI, M, 4, ("突袭",), False),
    ("许褚", WEI, M, 4, ("裸衣",), False),
    ("郭嘉", WEI, M, 3, ("天妒", "遗计"), False),
    ("甄姬", WEI, F, 3, ("倾国", "洛神"), False),
    ("刘备", SHU, M, 4, ("仁德", "激将"), True),
    ("关羽", SHU, M, 4, ("武圣",), False),
    ("张飞", SHU, M, 4, ("咆哮",), False),
    ("诸葛亮", SHU, M, 3, ("观星", "空城"), False),
    ("赵云", SHU, M, 4, ("龙胆",), False),
    ("马超", SHU, M, 4, ("马术", "铁骑"), False),
    ("黄月英", SHU, F, 3, ("集智", "奇才"), False),
    ("黄忠", SHU, M, 4, ("烈弓",), False),
    ("魏延", SHU, M, 4, ("狂骨",), False),
    ("孙权", WU, M, 4, ("制衡", "救援"), True),
    ("甘宁", WU, M, 4, ("奇袭",), False),
    ("吕蒙", WU, M, 4, ("克己",), False),
    ("黄盖", WU, M, 4, ("苦肉",), False),
    ("周瑜", WU, M, 3, ("英姿", "反间"), False),
    ("大乔", WU, F, 3, ("国色", "流离"), False),
    ("陆逊", WU, M, 3, ("谦逊", "连营"), False),
    ("孙尚香", WU, F, 3, ("结姻", "枭姬"), False),
    ("华佗", QUN, M, 3, ("急救", "青囊"), False),
    ("吕布", QUN, M, 4, ("无双",), False),
    ("貂蝉", QUN, F, 3, ("离间", "闭月"), False),
)


@cache
def standard_generals() -> dict[str, General]:
    """The 27 generals by name (callers copy before changing the mapping)."""
    return {
        name: General(name, fac, gender, hp, skills, lord)
        for name, fac, gender, hp, skills, lord in GENERALS
    }
