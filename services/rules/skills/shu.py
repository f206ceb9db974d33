"""蜀 generals' skills: 马超, 赵云 (standard) and 黄忠, 魏延 (风 expansion, pre-2013 texts)."""

from __future__ import annotations

from typing import Any, ClassVar

from ..core.cards import color_of
from ..core.damage import Damage, recover
from ..core.engine import pop, push
from ..core.judge import JUDGE_RULES, Judge
from ..core.query import attack_range, distance
from ..core.skills import Skill, register
from ..core.state import Frame, Game
from ..core.triggers import Trigger, ctx_frame
from ..core.use import NO_DODGE, UseCard
from ..core.vcard import is_slash, matches
from .base import Conversion, opt

JUDGE_RULES["铁骑"] = lambda c: color_of(c.suit) == "red"


def slash_target(g: Game, seat: int, trig: Trigger) -> tuple[UseCard, int] | None:
    """At ``targeted``: the 杀 ``seat`` uses and the target index, or None."""
    use = ctx_frame(g, trig)
    if not isinstance(use, UseCard) or use.user != seat or not is_slash(use.vc.name):
        return None
    return use, int(trig.data["i"])


@register
class LieGong(Skill):
    """烈弓: 出牌阶段，当你使用【杀】指定一名角色为目标后，若其手牌数不小于你的体力值或不大于
    你的攻击范围，你可以令此【杀】不能被【闪】响应。"""

    name = "烈弓"
    events = ("targeted",)
    optional_key: ClassVar[str] = ""  # seed 000 醉骂: compulsory unless this option says so

    def is_optional(self, g: Game, seat: int, trig: Any) -> bool:
        return bool(opt(g, self.optional_key, self.optional, seat))

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        st = slash_target(g, seat, trig)
        if st is None or g.current != seat or g.phase != "play":
            return False
        use, i = st
        n = len(g.players[(use.targets or [])[i]].hand)
        return n >= g.players[seat].hp or n <= attack_range(g, seat)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        ctx_frame(g, trig).tflags[trig.data["i"]] |= NO_DODGE


@register
class KuangGu(Skill):
    """狂骨: 锁定技，每当你对距离1以内的一名角色造成1点伤害后，你回复1点体力。 The distance is
    measured as the damage hits (before a death changes the table)."""

    name = "狂骨"
    events = ("damage_hit", "damage_caused")
    optional = False
    self_key: ClassVar[str] = ""  # option: dealing damage to yourself (distance 0) counts

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = ctx_frame(g, trig)
        if not isinstance(d, Damage) or d.source != seat:
            return False
        p = g.players[seat]
        if trig.point == "damage_hit":
            if d.target == seat:
                near = bool(opt(g, self.self_key, False, seat))
            else:
                near = distance(g, seat, d.target) <= 1
            if near:
                p.marks[self.name] = 1
            else:
                p.marks.pop(self.name, None)
            return False  # bookkeeping only: nothing is announced yet
        return bool(p.marks.get(self.name)) and p.hp < p.max_hp

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        d = ctx_frame(g, trig)
        g.players[seat].marks.pop(self.name, None)
        recover(g, seat, d.dealt)


@register
class MaShu(Skill):
    """马术: 锁定技，你计算与其他角色的距离-1（与−1马叠加）。"""

    name = "马术"
    optional = False
    fixed_distance = True

    def distance_from(self, g: Game, seat: int, other: int) -> int:
        return -1


@register
class TieQi(Skill):
    """铁骑: 当你使用【杀】指定一名角色为目标后，你可以进行判定：若结果为红色，此【杀】不能
    被【闪】响应。"""

    name = "铁骑"
    events = ("targeted",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return slash_target(g, seat, trig) is not None

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        push(g, TieQiJudge(seat=seat, use=trig.ctx, i=int(trig.data["i"]), skill=self.name))


class TieQiJudge(Frame, tag="tieqi"):
    """Judge for 铁骑; red → the 杀 cannot be dodged by that target."""

    seat: int
    use: int
    i: int
    skill: str

    def start(self, g: Game) -> None:
        self.then(self.judged)
        push(g, Judge(seat=self.seat, reason=self.skill))

    def judged(self, g: Game) -> None:
        if g.ret:
            g.stack[self.use].tflags[self.i] |= NO_DODGE
        pop(g)


@register
class LongDan(Conversion):
    """龙胆: 你可以将一张【杀】当【闪】、一张【闪】当【杀】使用或打出（仅手牌）。"""

    name = "龙胆"
    takes = "a hand 杀 into 闪, a hand 闪 into 杀"
    converts = "杀"  # the play-phase direction; 闪 is offered in respond decisions
    in_play = True

    def names(self, need: str) -> list[str]:
        return [need] if need in ("杀", "闪") else []

    def card_ok(self, g: Game, seat: int, cid: int, as_name: str) -> bool:
        name = g.cards[cid].name
        return matches("杀", name) if as_name == "闪" else name == "闪"
