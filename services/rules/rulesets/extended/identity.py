"""The seed 004 identity skills, one small class each, quoting the seed.

Where a skill acts is where the engine looks for it: the death-triggered ones (罪己 逆储 赏令 势颓
军溃 背水 守义 继位 统义 策立) through :class:`.frames.IdentityDeath` in the seed's order; 辅政 and
赃财 at ``turn_start`` (every seat is offered it; they run unannounced, since their holders are
hidden: only the ruler's or the 贼首's draw is public); the effects the 大将, 佞宦 and 党人 grant the
ruler (护威 hand limit, 惑主 damage cap, 弄权 attack range) and 暴乱 (a trigger on the 贼首's own
damage) are carried by the seat they act on as well as by their holder, and check that a living
holder still has them (A-004-04). Setup-time skills (君威 立储 结党) act in ``Extended.setup``.
"""

from __future__ import annotations

from typing import Any

from ...core.damage import lose_hp, recover
from ...core.engine import pop, push
from ...core.index import skills_changed
from ...core.skills import register
from ...core.state import Frame, Game
from ...core.triggers import ctx_frame
from ...core.zones import draw, move
from .base import IdentitySkill, grow, mark, reveal, state, used
from .camps import BANDITS, CAMP_OF, REBEL_CAMP, advanced, alive_in, ruler, seat_of
from .frames import BeiShui, CeLi, ShiTui, discard_everything, is_bandit_death

RULER_AURAS = ("护威", "惑主", "弄权")  # what the 大将, 佞宦 and 党人 grant the ruler


def holder_alive(g: Game, role: str, skill: str) -> bool:
    """Whether a living ``role`` still holds ``skill`` (not converted, not invalidated)."""
    s = seat_of(g, role)
    return s >= 0 and skill in state(g.players[s]).identity


def revealed_chief(g: Game) -> int:
    """The alive 贼首 who has used 统义, or -1."""
    s = seat_of(g, "zeishou")
    return s if s >= 0 and used(g, s, "统义") else -1


@register
class JunWei(IdentitySkill):
    """君威：分发身份牌后，明置身份牌（进阶：成为轮次一号位）。游戏开始前，体力上限+1，体力值+1，若你的武将牌有主公技，则你获得主公技。"""

    name = "君威"


@register
class LiChu(IdentitySkill):
    """立储：游戏开始前，你单独得知储君的位置。"""

    name = "立储"


@register
class JieDang(IdentitySkill):
    """结党：游戏开始前，佞臣阵营角色之间相互认识。"""

    name = "结党"


@register
class ZuiJi(IdentitySkill):
    """罪己：当你杀死储君或忠臣（进阶：储君、丞相或大将）后，弃置所有牌。"""

    name = "罪己"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        victims = ("chujun", "chengxiang", "dajiang") if advanced(g) else ("chujun", "loyalist")
        return killer == holder and g.players[dead].role in victims

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        discard_everything(g, holder)


@register
class NiChu(IdentitySkill):
    """逆储：当你杀死主公后，弃置所有牌。"""

    name = "逆储"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        return killer == holder and g.players[dead].role == "lord"

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        discard_everything(g, holder)


@register
class ShangLing(IdentitySkill):
    """赏令：当你死亡后，杀死你的角色摸三张牌（初级贼首：摸五张牌）。"""

    name = "赏令"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        return holder == dead and killer >= 0 and g.players[killer].alive

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        n = 5 if g.players[holder].role == "zeishou" and not advanced(g) else 3
        draw(g, killer, n, reason="赏令")


@register
class ShiTuiSkill(IdentitySkill):
    """势颓：当你死亡后，杀死你的角色摸3+X张牌（X为存活反贼阵营角色数），然后主公或已发动“继位”的储君回复1点体力或摸两张牌。"""

    name = "势颓"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        return holder == dead

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        push(g, ShiTui(dead=dead, killer=killer))


@register
class JunKui(IdentitySkill):
    """军溃：当你死亡后，所有反贼阵营角色的原先身份技能失效且获得“赏令”（杀死其的角色摸三张牌）。"""

    name = "军溃"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        return holder == dead

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        for s in alive_in(g, REBEL_CAMP):
            state(g.players[s]).identity = ["赏令"]
            skills_changed(g, s)


@register
class BeiShuiSkill(IdentitySkill):
    """背水：当你死亡后，杀死你的角色弃置三张牌。"""

    name = "背水"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        return holder == dead and killer >= 0 and g.players[killer].alive

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        p = g.players[killer]
        if p.hand or p.equip:
            push(g, BeiShui(seat=killer))


@register
class ShouYi(IdentitySkill):
    """守义：当你死亡后，贼首摸三张牌。"""

    name = "守义"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        return holder == dead and seat_of(g, "zeishou") >= 0

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        draw(g, seat_of(g, "zeishou"), 3, reason="守义")


@register
class JiWei(IdentitySkill):
    """继位：当主公死亡后，明置身份牌，体力上限+1，回复1点体力（进阶：摸三张牌），若你的武将牌有主公技，则你获得主公技。然后你获得“罪己”。"""

    name = "继位"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        return g.players[dead].role == "lord" and not used(g, holder, "继位")

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        mark(g, holder, "继位")
        reveal(g, holder)
        grow(g, holder, 3 if advanced(g) else 0, lord_skill=True)
        p = g.players[holder]
        gained = ["罪己", *RULER_AURAS] if advanced(g) else ["罪己"]
        state(p).identity = [s for s in state(p).identity if s != "逆储"] + gained
        skills_changed(g, holder)


@register
class TongYi(IdentitySkill):
    """统义：当主公死亡后或首次有反贼（进阶：反贼阵营角色）死亡后（进阶：或内奸因濒死而发动“策立”明置身份牌时），明置身份牌，体力上限+1，回复1点体力（进阶：摸三张牌），若你的武将牌有主公技，则你获得主公技。"""

    name = "统义"

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        if used(g, holder, "统义"):
            return False
        if g.players[dead].role == "lord":
            return True
        first = [p.seat for p in g.players if not p.alive and p.role in BANDITS]
        return is_bandit_death(g, dead) and first == [dead]  # A-004-07

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        mark(g, holder, "统义")
        reveal(g, holder)
        grow(g, holder, 3 if advanced(g) else 0, lord_skill=True)


@register
class CeLiSkill(IdentitySkill):
    """策立：当主公死亡后或所有反贼阵营死亡后（进阶：或当你进入濒死状态时），明置身份牌，体力上限+1，回复1点体力，摸三张牌，于当前回合结束后获得一个额外的回合（进阶：获得主公技，然后其他角色依次选择是否成为“叛徒”，若均否，你选择额外回合或令所有其他角色各失去1点体力）。"""

    name = "策立"
    events = ("dying",)

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        if used(g, holder, "策立"):
            return False
        if g.players[dead].role == "lord":
            return True
        return CAMP_OF.get(g.players[dead].role) == REBEL_CAMP and not alive_in(g, REBEL_CAMP)

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        push(g, CeLi(seat=holder))

    def can(self, g: Game, seat: int, trig: Any) -> bool:
        return advanced(g) and ctx_frame(g, trig).seat == seat and not used(g, seat, "策立")

    def run(self, g: Game, seat: int, trig: Any) -> None:
        push(g, CeLi(seat=seat, dying=True))


@register
class FuZheng(IdentitySkill):
    """辅政：若你存活，主公或已发动“继位”的储君于其回合开始时摸一张牌。"""

    name = "辅政"
    events = ("turn_start",)
    # the 丞相 is hidden: announcing the skill would name its seat, so it runs unannounced and
    # the ruler's draw (reason 辅政) is the whole public effect
    asks_itself = True

    def can(self, g: Game, seat: int, trig: Any) -> bool:
        turn: int = ctx_frame(g, trig).seat
        return turn == ruler(g) >= 0

    def run(self, g: Game, seat: int, trig: Any) -> None:
        draw(g, ruler(g), 1, reason="辅政")


@register
class HuWei(IdentitySkill):
    """护威：若你存活，主公或已发动“继位”的储君手牌上限+2。"""

    name = "护威"

    def hand_limit(self, g: Game, seat: int) -> int:
        return 2 if seat == ruler(g) and holder_alive(g, "dajiang", self.name) else 0


@register
class HuoZhu(IdentitySkill):
    """惑主：若你存活，主公或已发动“继位”的储君造成的伤害至多为1。"""

    name = "惑主"
    events = ("damage_hit",)  # after every source and target modifier (a final cap)

    def can(self, g: Game, seat: int, trig: Any) -> bool:
        return (
            ctx_frame(g, trig).amount > 1
            and seat == ruler(g)
            and holder_alive(g, "ninghuan", self.name)
        )

    def run(self, g: Game, seat: int, trig: Any) -> None:
        ctx_frame(g, trig).amount = 1


@register
class NongQuan(IdentitySkill):
    """弄权：若你存活，主公或已发动“继位”的储君攻击范围-1（攻击范围至少为1）。"""

    name = "弄权"

    def attack_range(self, g: Game, seat: int) -> int:
        return -1 if seat == ruler(g) and holder_alive(g, "dangren", self.name) else 0


@register
class JuYi(IdentitySkill):
    """聚义：若你已发动“统义”，本局你的攻击范围+X（X为存活反贼阵营角色数）。"""

    name = "聚义"

    def attack_range(self, g: Game, seat: int) -> int:
        return len(alive_in(g, REBEL_CAMP)) if used(g, seat, "统义") else 0


@register
class BaoLuan(IdentitySkill):
    """暴乱：每回合限一次，已发动“统义”的贼首于其回合内造成一次伤害后，其可令受到伤害的角色失去1点体力。"""

    name = "暴乱"
    events = ("damage_caused",)
    optional = True  # "其可令": the 贼首 decides

    def can(self, g: Game, seat: int, trig: Any) -> bool:
        return (
            seat == revealed_chief(g) == g.current
            and not g.turn_marks.get("暴乱")
            and holder_alive(g, "baomin", self.name)
            and g.players[ctx_frame(g, trig).target].alive
        )

    def run(self, g: Game, seat: int, trig: Any) -> None:
        g.turn_marks["暴乱"] = 1
        lose_hp(g, ctx_frame(g, trig).target, 1)


@register
class ZangCai(IdentitySkill):
    """赃财：已发动“统义”的贼首于其回合开始时摸一张牌。"""

    name = "赃财"
    events = ("turn_start",)
    asks_itself = True  # unannounced, as 辅政: the 盗匪 stays hidden; the 贼首's draw says it

    def can(self, g: Game, seat: int, trig: Any) -> bool:
        turn: int = ctx_frame(g, trig).seat
        return turn == revealed_chief(g) >= 0

    def run(self, g: Game, seat: int, trig: Any) -> None:
        draw(g, revealed_chief(g), 1, reason="赃财")


@register
class NaLu(IdentitySkill):
    """纳赂：当你获得此身份时，明置身份牌，弃置区域里的所有牌，然后你回复体力至满点并摸等于体力上限的牌（回复值和摸牌数至多为5）。"""

    name = "纳赂"

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        push(g, NaLuFrame(seat=holder))


class NaLuFrame(Frame, tag="nalu"):
    """纳赂 in two steps: what losing the cards fires (连营, 枭姬) runs before the 然后 part."""

    seat: int

    def start(self, g: Game) -> None:
        p = g.players[self.seat]
        self.then(self.discarded)
        reveal(g, self.seat)
        if p.judge:
            move(g, list(p.judge), "judge", "discard", self.seat, reason="纳赂")
        discard_everything(g, self.seat)

    def discarded(self, g: Game) -> None:
        """然后你回复体力至满点并摸等于体力上限的牌（至多为5）."""
        p = g.players[self.seat]
        pop(g)
        if not p.alive:
            return
        recover(g, self.seat, min(p.max_hp - p.hp, 5))
        draw(g, self.seat, min(p.max_hp, 5), reason="纳赂")


@register
class ChouPan(IdentitySkill):
    """仇叛：其他角色对你使用牌无距离限制。"""

    name = "仇叛"

    def no_distance_limit(self, g: Game, seat: int, user: int, card_name: str) -> bool:
        # the limit of every card used on the 叛徒 is lifted (杀's attack range, 顺手牵羊, 兵粮寸断);
        # its distance is not changed (噬血/狂骨's "within distance 1" still measures it)
        return user != seat
