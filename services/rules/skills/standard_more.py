"""The skills of the standard generals that seed 000 does not copy: 张辽 (突袭), 刘备 (仁德, 激将),
关羽 (武圣), 张飞 (咆哮), 诸葛亮 (观星, 空城), 黄月英 (集智, 奇才), 黄盖 (苦肉). Texts: the
standard edition (标准版, FreeKill ``standard``/QSanguosha)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..cards.basic import UNLIMITED
from ..core.cards import color_of
from ..core.choices import Choice, register_choice
from ..core.damage import lose_hp, recover
from ..core.engine import answer, ask, emit, pop, push
from ..core.events import SkillInvoked
from ..core.flow import DrawPhase
from ..core.keys import card_keys, cards_of
from ..core.pick import PickCard
from ..core.query import order_from
from ..core.respond import AskCard
from ..core.skills import Skill, register
from ..core.state import Frame, Game
from ..core.triggers import Trigger, ctx_frame
from ..core.use import CARD_SPECS, UseCard, use_card
from ..core.vcard import VCard, is_slash
from ..core.zones import draw, move
from .base import Conversion, Procedure, SkillFrame
from .wei import HelpersAsk, HuJia

if TYPE_CHECKING:
    from ..core.redeal import Redeal


@register
class TuXi(Procedure):
    """突袭: 摸牌阶段，你可以放弃摸牌，改为获得一至两名其他角色的各一张手牌。"""

    name = "突袭"
    events = ("draw_count",)

    def _seats(self, g: Game, seat: int) -> list[int]:
        return [s for s in order_from(g, seat, include_start=False) if g.players[s].hand]

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        fr = ctx_frame(g, trig)
        return isinstance(fr, DrawPhase) and fr.seat == seat and bool(self._seats(g, seat))

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        self.start(g, seat, ctx=trig.ctx)

    def choices(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return self._seats(g, seat), 1, 2

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        g.stack[f.ctx].n = 0
        push(g, TuXiFrame(seat=seat, owners=list(f.seats)))


class TuXiFrame(Frame, tag="tuxi"):
    """Take one hand card (at random) of each chosen seat in turn."""

    seat: int
    owners: list[int]
    i: int = 0

    def start(self, g: Game) -> None:
        if self.i >= len(self.owners):
            pop(g)
            return
        self.i += 1
        self.then(self.picked)
        push(
            g,
            PickCard(chooser=self.seat, owner=self.owners[self.i - 1], equip=False, reason="突袭"),
        )

    def picked(self, g: Game) -> None:
        self.then(self.start)
        cid = g.ret
        owner = self.owners[self.i - 1]
        if cid is not None and cid >= 0 and cid in g.players[owner].hand:
            move(
                g,
                [cid],
                "hand",
                "hand",
                owner,
                self.seat,
                reason="突袭",
                seen_by=[owner, self.seat],
            )


@register
class RenDe(Procedure):
    """仁德: 出牌阶段，你可以将至少一张手牌交给一名其他角色，若你于此阶段内以此法给出的牌首次
    达到两张或更多，你回复1点体力。"""

    name = "仁德"

    def can_activate(self, g: Game, seat: int) -> bool:
        return bool(g.players[seat].hand) and len(order_from(g, seat)) > 1

    def cost(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        hand = list(g.players[seat].hand)
        return hand, 1, len(hand)

    def choices(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return order_from(g, seat, include_start=False), 1, 1

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        p, to = g.players[seat], f.seats[0]
        before = p.marks.get("t:仁德", 0)
        p.marks["t:仁德"] = before + len(f.cards)
        move(g, list(f.cards), "hand", "hand", seat, to, reason=self.name, seen_by=[seat, to])
        if before < 2 <= before + len(f.cards):
            recover(g, seat, 1)


@register
class JiJiang(HuJia):
    """激将: 主公技，当你需要使用或打出【杀】时，你可以令其他蜀势力角色选择是否打出一张【杀】
    （视为由你使用或打出）。 Helpers: the holder's faction, in turn order from its next seat."""

    name = "激将"

    def provides(self, g: Game, seat: int, ask: Any) -> bool:
        return bool(ask.need == "杀" and ask.mode != "select" and self.helpers(g, seat))

    def provide(self, g: Game, seat: int, ask: Any) -> None:
        emit(g, SkillInvoked(seat=seat, skill=self.name))
        push(g, HelpersAsk(seat=seat, skill=self.name, need="杀", order=self.helpers(g, seat)))

    def can_activate(self, g: Game, seat: int) -> bool:
        return bool(self.helpers(g, seat)) and CARD_SPECS["杀"].can_use(
            g, seat, VCard(name="杀", skill=self.name)
        )

    def activate(self, g: Game, seat: int) -> None:
        emit(g, SkillInvoked(seat=seat, skill=self.name))
        push(g, JiJiangUse(seat=seat))


class JiJiangUse(Frame, tag="jijiang_use"):
    """激将 in the play phase: the helpers are asked for a 杀, which the lord then uses."""

    seat: int

    def start(self, g: Game) -> None:
        self.then(self.answered)
        helpers = JiJiang().helpers(g, self.seat)
        push(g, HelpersAsk(seat=self.seat, skill="激将", need="杀", order=helpers))

    def answered(self, g: Game) -> None:
        vc = g.ret
        pop(g, None)
        if isinstance(vc, VCard):
            use_card(g, self.seat, vc)


@register
class WuSheng(Conversion):
    """武圣: 你可以将一张红色牌当【杀】使用或打出。"""

    name = "武圣"
    takes = "a red card"
    converts = "杀"
    equip_too = True
    in_play = True

    def card_ok(self, g: Game, seat: int, cid: int, as_name: str) -> bool:
        return color_of(g.cards[cid].suit) == "red"


@register
class PaoXiao(Skill):
    """咆哮: 锁定技，出牌阶段，你使用【杀】无次数限制。"""

    name = "咆哮"
    optional = False

    def slash_limit(self, g: Game, seat: int) -> int:
        return UNLIMITED


@register
class GuanXing(Skill):
    """观星: 准备阶段，你可以观看牌堆顶的X张牌（X为存活角色数且至多为5），然后以任意顺序放回
    牌堆顶或牌堆底。 Decision ``choose`` (about 观星): the cards named go on top in the order
    named; with the word ``bottom`` the others go to the bottom, else they stay on top below the
    named ones. Declining leaves the pile as it was."""

    name = "观星"
    events = ("phase_start",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return bool(trig.data.get("phase") == "start" and g.current == seat and g.draw)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        push(g, GuanXingFrame(seat=seat))


register_choice("观星", Choice("arrange", ordered=True))


class GuanXingFrame(Frame, tag="guanxing"):
    """Show the top X cards to the seat (a ``choose`` decision) and rearrange them."""

    seat: int
    cards: list[int] = msgspec.field(default_factory=list)  # top first

    def start(self, g: Game) -> None:
        x = min(5, len(order_from(g, self.seat)), len(g.draw))
        self.cards = list(reversed(g.draw[-x:]))
        self.then(self.arranged)
        ask(
            g,
            self.seat,
            "choose",
            card_keys(self.cards) + ["bottom"],
            1,
            len(self.cards) + 1,
            info={"about": "观星", "cards": list(self.cards)},
        )

    def redeal(self, g: Game, rd: Redeal) -> None:
        """The seat looking at the top cards knows them: they stay on top (and ``arranged``
        takes them from there)."""
        if rd.seat == self.seat:
            rd.pin_on_top(g, self.cards)

    def arranged(self, g: Game) -> None:
        picks = answer(g)
        pop(g)
        if not picks:
            return
        top = cards_of(p for p in picks if p != "bottom")
        rest = [c for c in self.cards if c not in top]
        del g.draw[-len(self.cards) :]
        if "bottom" in picks:
            g.draw[:0] = list(reversed(rest))  # the first of them ends nearest the top
            rest = []
        g.draw.extend(reversed(top + rest))


@register
class KongCheng(Skill):
    """空城: 锁定技，若你没有手牌，你不能被选择为【杀】或【决斗】的目标。"""

    name = "空城"
    optional = False

    def prohibits(self, g: Game, seat: int, user: int, card_name: str) -> bool:
        return (is_slash(card_name) or card_name == "决斗") and not g.players[seat].hand


@register
class JiZhi(Skill):
    """集智: 每当你使用一张非延时类锦囊牌时，你可以摸一张牌。"""

    name = "集智"
    events = ("card_using",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        fr = ctx_frame(g, trig)
        if not isinstance(fr, UseCard | AskCard) or fr.user != seat or fr.vc is None:
            return False
        spec = CARD_SPECS.get(fr.vc.name)
        return spec is not None and spec.kind == "trick"

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        draw(g, seat, 1, reason=self.name)


@register
class QiCai(Skill):
    """奇才: 锁定技，你使用锦囊牌无距离限制。"""

    name = "奇才"
    optional = False

    def ignores_distance(self, g: Game, seat: int, card_name: str) -> bool:
        spec = CARD_SPECS.get(card_name)
        return spec is not None and spec.kind in ("trick", "delayed")


@register
class KuRou(Skill):
    """苦肉: 出牌阶段，你可以失去1点体力，然后摸两张牌。"""

    name = "苦肉"

    def can_activate(self, g: Game, seat: int) -> bool:
        return True

    def activate(self, g: Game, seat: int) -> None:
        emit(g, SkillInvoked(seat=seat, skill=self.name))
        push(g, KuRouFrame(seat=seat))


class KuRouFrame(Frame, tag="kurou"):
    """Lose 1 HP (dying may follow), then draw two if still alive."""

    seat: int

    def start(self, g: Game) -> None:
        self.then(self.draw_two)
        lose_hp(g, self.seat, 1)

    def draw_two(self, g: Game) -> None:
        pop(g)
        if g.players[self.seat].alive:
            draw(g, self.seat, 2, reason="苦肉")
