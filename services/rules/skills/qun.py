"""群 generals' skills (standard edition): 华佗, 吕布, 貂蝉."""

from __future__ import annotations

from ..core.cards import color_of
from ..core.damage import recover
from ..core.query import order_from
from ..core.skills import Skill, register
from ..core.state import Game
from ..core.triggers import Trigger, ctx_frame
from ..core.use import TWO_DODGE, use_card
from ..core.vcard import VCard
from ..core.zones import discard_from, draw
from .base import Conversion, Procedure, SkillFrame, opt, own_cards, used
from .shu import slash_target


@register
class LiJian(Procedure):
    """离间: 出牌阶段限一次，你可以弃置一张牌并选择两名男性角色，视为其中一名角色对另一名角色
    使用一张【决斗】，此【决斗】不能被【无懈可击】响应。 Seats in order: the 决斗's user, then
    its target."""

    name = "离间"
    once_per_turn = True

    def _males(self, g: Game, seat: int) -> list[int]:
        return [s for s in order_from(g, seat) if g.players[s].gender == "male"]

    def can_activate(self, g: Game, seat: int) -> bool:
        return (
            not used(g, seat, self.name)
            and bool(own_cards(g, seat))
            and len(self._males(g, seat)) >= 2
        )

    def cost(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return own_cards(g, seat), 1, 1

    def choices(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return self._males(g, seat), 2, 2

    def refuse_choice(self, g: Game, seat: int, f: SkillFrame, t: int) -> str:
        if g.players[t].gender != "male":
            return f"{self.name} chooses male characters: seat {t} is {g.players[t].gender}"
        return super().refuse_choice(g, seat, f, t)

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        user, target = f.seats
        use_card(
            g, user, VCard(name="决斗", skill=self.name), [target], counted=False, nullifiable=False
        )
        discard_from(g, seat, f.cards, reason=self.name)


@register
class BiYue(Skill):
    """闭月: 结束阶段，你可以摸一张牌。"""

    name = "闭月"
    events = ("phase_start",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return bool(trig.data.get("phase") == "finish" and g.current == seat)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        draw(g, seat, 1, reason=self.name)


@register
class JiJiu(Conversion):
    """急救: 你的回合外，你可以将一张红色牌当【桃】使用。"""

    name = "急救"
    takes = "a red card"
    when = "outside its holder's turn"
    converts = "桃"
    equip_too = True

    def usable_now(self, g: Game, seat: int) -> bool:
        return g.current != seat

    def card_ok(self, g: Game, seat: int, cid: int, as_name: str) -> bool:
        return color_of(g.cards[cid].suit) == "red"


@register
class QingNang(Procedure):
    """青囊: 出牌阶段限一次，你可以弃置一张手牌并选择一名已受伤的角色，令其回复1点体力
    （选项 ``zanghua_wounded_only`` 为 False 时可选任意角色，A-000-09）。"""

    name = "青囊"
    once_per_turn = True

    def _targets(self, g: Game, seat: int) -> list[int]:
        wounded = bool(opt(g, "zanghua_wounded_only", True, seat))
        return [
            s for s in order_from(g, seat) if not wounded or g.players[s].hp < g.players[s].max_hp
        ]

    def can_activate(self, g: Game, seat: int) -> bool:
        return (
            not used(g, seat, self.name)
            and bool(g.players[seat].hand)
            and bool(self._targets(g, seat))
        )

    def cost(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return list(g.players[seat].hand), 1, 1

    def choices(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return self._targets(g, seat), 1, 1

    def refuse_choice(self, g: Game, seat: int, f: SkillFrame, t: int) -> str:
        p = g.players[t]
        if p.hp >= p.max_hp:
            return f"{self.name} heals a wounded character: seat {t} is at full HP"
        return super().refuse_choice(g, seat, f, t)

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        discard_from(g, seat, f.cards, reason=self.name)
        recover(g, f.seats[0], 1)


@register
class WuShuang(Skill):
    """无双: 锁定技，你使用的【杀】需两张【闪】才能抵消；与你进行【决斗】的角色每次需打出两张
    【杀】。"""

    name = "无双"
    events = ("targeted",)
    optional = False
    double_duel = True  # read by 决斗 (cards/tricks.slashes_needed)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return slash_target(g, seat, trig) is not None

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        ctx_frame(g, trig).tflags[trig.data["i"]] |= TWO_DODGE
