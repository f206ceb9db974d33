"""Seed 004 roles and camps, the ruler, and the win/draw tables (REFERENCE §6.2.3, §6.3.3).

Roles are the scenario format's words: ``lord``, ``chujun`` 储君, ``loyalist`` 忠臣, ``zeishou``
贼首, ``rebel`` 反贼, ``renegade`` 内奸 (beginner); ``chengxiang`` 丞相, ``dajiang`` 大将,
``ninghuan`` 佞宦, ``dangren`` 党人, ``qiongkou`` 穷寇, ``yizei`` 义贼, ``baomin`` 暴民, ``daofei``
盗匪 and ``pantu`` 叛徒 (advanced). A camp is decided by a seat's *current* role: a character who
becomes 叛徒 leaves its old camp for the 内奸 camp (A-004-09).
"""

from __future__ import annotations

from typing import Any

from ...core.state import Game

LORD_CAMP, REBEL_CAMP, RENEGADE_CAMP, NINGCHEN_CAMP = "zhuzhong", "fanzei", "neijian", "ningchen"
DRAW = "draw"

BEGINNER_ROLES = ("lord", "chujun", "loyalist", "zeishou", "rebel", "rebel", "rebel", "renegade")
ADVANCED_ROLES = (
    "lord",
    "chujun",
    "chengxiang",
    "dajiang",
    "ninghuan",
    "dangren",
    "zeishou",
    "qiongkou",
    "yizei",
    "baomin",
    "daofei",
    "renegade",
)

CAMP_OF: dict[str, str] = {
    "lord": LORD_CAMP,
    "chujun": LORD_CAMP,
    "loyalist": LORD_CAMP,
    "chengxiang": LORD_CAMP,
    "dajiang": LORD_CAMP,
    "ninghuan": NINGCHEN_CAMP,
    "dangren": NINGCHEN_CAMP,
    "zeishou": REBEL_CAMP,
    "rebel": REBEL_CAMP,
    "qiongkou": REBEL_CAMP,
    "yizei": REBEL_CAMP,
    "baomin": REBEL_CAMP,
    "daofei": REBEL_CAMP,
    "renegade": RENEGADE_CAMP,
    "pantu": RENEGADE_CAMP,
}
# the rebel camp's members other than the chief: "反贼" (beginner) / "反贼阵营角色" (advanced)
BANDITS = ("rebel", "qiongkou", "yizei", "baomin", "daofei")
LOYALISTS = ("loyalist", "chengxiang", "dajiang")  # 所有忠臣 = 丞相 + 大将 (A-004-10)


def advanced(g: Game) -> bool:
    """Whether the game plays the 12-player 进阶版."""
    return g.options.get("variant") == "advanced"


def seat_of(g: Game, role: str) -> int:
    """The alive seat holding ``role`` (unique roles), or -1."""
    for p in g.players:
        if p.alive and p.role == role:
            return p.seat
    return -1


def alive_in(g: Game, camp: str) -> list[int]:
    """Alive seats of ``camp`` in seat order."""
    return [p.seat for p in g.players if p.alive and CAMP_OF.get(p.role) == camp]


def ruler(g: Game) -> int:
    """ "主公或已发动“继位”的储君": the alive lord, else the alive 储君 who used 继位, else -1."""
    lord = seat_of(g, "lord")
    if lord >= 0:
        return lord
    heir = seat_of(g, "chujun")
    return heir if heir >= 0 and g.players[heir].marks.get("id:继位") else -1


def beginner_result(g: Game, options: dict[str, Any]) -> str | None:
    """§6.2.3 literally: the winning camp, ``draw`` (everyone dead) or None (play on; A-004-08)."""
    if options.get("beginner_use_advanced_table"):
        return advanced_result(g, options)
    if not any(p.alive for p in g.players):
        return DRAW
    rebels, renegades = alive_in(g, REBEL_CAMP), alive_in(g, RENEGADE_CAMP)
    if not rebels and not renegades:
        return LORD_CAMP
    if seat_of(g, "lord") < 0 and seat_of(g, "chujun") < 0 and rebels:
        return REBEL_CAMP
    if all(CAMP_OF.get(p.role) == RENEGADE_CAMP for p in g.players if p.alive):
        return RENEGADE_CAMP
    return None


def advanced_result(g: Game, options: dict[str, Any]) -> str | None:
    """§6.3.3's five rows in table order, first match wins (A-004-11: rows 3 and 4 overlap;
    ``advanced_row_priority: lord_camp`` tries row 4 before row 3)."""
    rulers_dead = seat_of(g, "lord") < 0 and seat_of(g, "chujun") < 0
    rebels, renegades = bool(alive_in(g, REBEL_CAMP)), bool(alive_in(g, RENEGADE_CAMP))
    ningchen = bool(alive_in(g, NINGCHEN_CAMP))
    loyal = any(p.alive and p.role in LOYALISTS for p in g.players)
    one_ruler = (seat_of(g, "lord") >= 0) != (seat_of(g, "chujun") >= 0)
    rows = [
        (rulers_dead and rebels, REBEL_CAMP),
        (rulers_dead and not rebels and renegades, RENEGADE_CAMP),
        (rulers_dead and not rebels and not renegades, DRAW),
        (not rebels and not renegades and not ningchen, LORD_CAMP),
        (not rebels and not renegades and ningchen and not loyal and one_ruler, NINGCHEN_CAMP),
    ]
    if options.get("advanced_row_priority", "table") == "lord_camp":
        rows[2], rows[3] = rows[3], rows[2]
    for holds, result in rows:
        if holds:
            return result
    return None


def winners_of(g: Game, camp: str) -> list[int]:
    """Every seat (alive or dead) whose current role belongs to ``camp``."""
    return [p.seat for p in g.players if CAMP_OF.get(p.role) == camp]
