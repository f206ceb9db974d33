"""吴 generals' skills (standard edition): 孙权, 甘宁, 吕蒙, 周瑜, 大乔, 陆逊, 孙尚香."""

from __future__ import annotations

import msgspec

from ..core.choices import Choice, register_choice
from ..core.damage import damage, recover
from ..core.engine import answer, ask_choice, emit, pop, push
from ..core.events import CardShown, SuitNamed, TargetChanged
from ..core.flow import DrawPhase, TurnFrame
from ..core.keys import suit_key, suit_of
from ..core.pick import PickCard
from ..core.query import attack_range, distance_without, in_range, order_from, prohibited
from ..core.skills import Skill, register
from ..core.state import Frame, Game
from ..core.triggers import Trigger, ctx_frame
from ..core.use import UseCard
from ..core.vcard import is_slash
from ..core.zones import discard_from, draw, move
from .base import Conversion, Procedure, SkillFrame, opt, own_cards, used


@register
class ZhiHeng(Procedure):
    """制衡: 出牌阶段限一次，你可以弃置任意张牌，然后摸等量的牌。"""

    name = "制衡"
    once_per_turn = True

    def can_activate(self, g: Game, seat: int) -> bool:
        return not used(g, seat, self.name) and bool(own_cards(g, seat))

    def cost(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        cards = own_cards(g, seat)
        return cards, 1, len(cards)

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        push(g, DiscardDraw(seat=seat, cards=f.cards, skill=self.name))


class DiscardDraw(Frame, tag="discard_draw"):
    """Discard ``cards``, then draw as many (two steps, so loss triggers run in between)."""

    seat: int
    cards: list[int]
    skill: str

    def start(self, g: Game) -> None:
        self.then(self.draw_as_many)
        discard_from(g, self.seat, self.cards, reason=self.skill)

    def draw_as_many(self, g: Game) -> None:
        pop(g)
        draw(g, self.seat, len(self.cards), reason=self.skill)


@register
class JiuYuan(Skill):
    """救援: 主公技，锁定技，若你处于濒死状态，其他吴势力角色对你使用【桃】时，你额外回复1点
    体力。 Faction = the holder's; option ``jiuyuan_literal`` (A-000-07): instead, other
    characters of that faction who use 桃 on themselves while dying recover 1 extra."""

    name = "救援"
    events = ("peach_saving",)
    optional = False
    lord = True

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        dying, by = int(trig.data["seat"]), int(trig.data["by"])
        fac = g.players[seat].faction
        if opt(g, "jiuyuan_literal", False, seat):
            return dying != seat and by == dying and g.players[dying].faction == fac
        return dying == seat and by != seat and g.players[by].faction == fac

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        recover(g, int(trig.data["seat"]), 1)


@register
class QiXi(Conversion):
    """奇袭: 出牌阶段，你可以将一张黑色牌当【过河拆桥】使用。"""

    name = "奇袭"
    takes = "a black card"
    converts = "过河拆桥"
    equip_too = True
    in_play = True
    in_respond = False

    def card_ok(self, g: Game, seat: int, cid: int, as_name: str) -> bool:
        return g.cards[cid].suit in ("S", "C")


@register
class KeJi(Skill):
    """克己: 若你未于出牌阶段内使用或打出过【杀】，你可以跳过此回合的弃牌阶段。"""

    name = "克己"
    events = ("card_using", "card_playing", "before_phase")

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        if g.current != seat:
            return False
        if trig.point != "before_phase":  # bookkeeping only: remember a 杀 in the play phase
            fr = ctx_frame(g, trig)
            vc = getattr(fr, "vc", None)
            if (
                g.phase == "play"
                and getattr(fr, "user", -1) == seat
                and vc is not None
                and is_slash(vc.name)
            ):
                g.players[seat].marks["t:克己"] = 1
            return False
        return trig.data.get("phase") == "discard" and not g.players[seat].marks.get("t:克己")

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        turn = ctx_frame(g, trig)
        if isinstance(turn, TurnFrame) and "discard" not in turn.skip:
            turn.skip.append("discard")


@register
class YingZi(Skill):
    """英姿: 摸牌阶段，你可以额外摸一张牌。"""

    name = "英姿"
    events = ("draw_count",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        fr = ctx_frame(g, trig)
        return isinstance(fr, DrawPhase) and fr.seat == seat

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        ctx_frame(g, trig).n += 1


@register
class FanJian(Procedure):
    """反间: 出牌阶段限一次，你可以令一名其他角色选择一种花色，然后其获得你的一张手牌并展示之，
    若此牌花色与其所选的不同，你对其造成1点伤害。 Option ``fanjian_damage_first`` (seed 000,
    A-000-08): it takes one of your hand cards at random and reveals it; damage first, then it
    obtains the card."""

    name = "反间"
    once_per_turn = True

    def can_activate(self, g: Game, seat: int) -> bool:
        return not used(g, seat, self.name) and bool(g.players[seat].hand)

    def choices(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return order_from(g, seat, include_start=False), 1, 1

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        push(g, FanJianFrame(seat=seat, target=f.seats[0], skill=self.name))


register_choice("反间", Choice("suit"))


class FanJianFrame(Frame, tag="fanjian"):
    """The target names a suit, takes a hand card of the user at random; damage on a mismatch."""

    seat: int
    target: int
    skill: str
    suit: str = ""
    card: int = -1

    def start(self, g: Game) -> None:
        self.then(self.suit_named)
        ask_choice(g, self.target, [suit_key(s) for s in "SHCD"], about=self.skill)

    def suit_named(self, g: Game) -> None:
        self.suit = suit_of(answer(g)[0])
        emit(g, SuitNamed(seat=self.target, suit=self.suit))
        self.then(self.taken)
        push(g, PickCard(chooser=self.target, owner=self.seat, equip=False, reason=self.skill))

    def taken(self, g: Game) -> None:
        """The card is shown and obtained (A-000-08: it waits in the processing area while the
        damage resolves)."""
        self.card = g.ret if g.ret is not None else -1
        if self.card < 0:
            pop(g)
            return
        self.then(self.compared)
        emit(g, CardShown(seat=self.seat, card=self.card))
        if opt(g, "fanjian_damage_first", False, self.seat):
            move(g, [self.card], "hand", "processing", self.seat, reason=self.skill)
        else:
            move(g, [self.card], "hand", "hand", self.seat, self.target, reason=self.skill)

    def compared(self, g: Game) -> None:
        self.then(self.done)
        if g.cards[self.card].suit != self.suit and g.players[self.target].alive:
            damage(g, self.seat, self.target, 1, card=self.skill)

    def done(self, g: Game) -> None:
        pop(g)
        if self.card in g.processing:
            if g.players[self.target].alive:
                move(g, [self.card], "processing", "hand", -1, self.target, reason=self.skill)
            else:
                move(g, [self.card], "processing", "discard", reason=self.skill)


@register
class GuoSe(Conversion):
    """国色: 出牌阶段，你可以将一张♦牌当【乐不思蜀】使用。"""

    name = "国色"
    takes = "a ♦ card"
    converts = "乐不思蜀"
    equip_too = True
    in_play = True
    in_respond = False

    def card_ok(self, g: Game, seat: int, cid: int, as_name: str) -> bool:
        return g.cards[cid].suit == "D"


def _liuli_ok(g: Game, seat: int, use: UseCard, t: int, without: int) -> bool:
    return (
        t not in (seat, use.user)
        and t not in (use.targets or [])
        and in_range(g, seat, t, without)
        and not prohibited(g, t, use.user, use.vc.name)
    )


@register
class LiuLi(Procedure):
    """流离: 当你成为【杀】的目标时，你可以弃置一张牌，将此【杀】转移给你攻击范围内的一名其他
    角色（不能是此【杀】的使用者）。"""

    name = "流离"
    events = ("become_target",)
    asks_itself = True

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        use = ctx_frame(g, trig)
        if not isinstance(use, UseCard) or not is_slash(use.vc.name):
            return False
        cards = own_cards(g, seat)
        return bool(cards) and any(
            _liuli_ok(g, seat, use, t, c)
            for c in cards
            for t in order_from(g, seat, include_start=False)
        )

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        self.start(g, seat, ctx=trig.ctx, data={"i": trig.data["i"]})

    def cost(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return own_cards(g, seat), 1, 1

    def choices(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        use = g.stack[f.ctx]
        without = f.cards[0] if f.cards else -1
        return (
            [
                t
                for t in order_from(g, seat, include_start=False)
                if _liuli_ok(g, seat, use, t, without)
            ],
            1,
            1,
        )

    def refuse_choice(self, g: Game, seat: int, f: SkillFrame, t: int) -> str:
        use = g.stack[f.ctx]
        if t == use.user:
            return f"{self.name} cannot move the 杀 to its user (seat {t})"
        if t == seat or t in (use.targets or []):
            return f"seat {t} is already a target of the 杀"
        without = f.cards[0] if f.cards else -1
        if g.players[seat].alive and not in_range(g, seat, t, without):
            d, r = distance_without(g, seat, t, without), attack_range(g, seat, without)
            return f"out of range: seat {t} is at distance {d}, beyond attack range {r}"
        return super().refuse_choice(g, seat, f, t)

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        use = g.stack[f.ctx]
        assert isinstance(use, UseCard) and use.targets is not None
        i, new = int(f.data["i"]), f.seats[0]
        discard_from(g, seat, f.cards, reason=self.name)
        use.targets[i] = new
        use.i = i  # the new target is a target "becoming" one too (another 流离 may move it)
        emit(g, TargetChanged(card=use.vc.name, old=seat, new=new, skill=self.name))


@register
class QianXun(Skill):
    """谦逊: 锁定技，你不能被选择为【顺手牵羊】和【乐不思蜀】的目标。"""

    name = "谦逊"
    optional = False

    def prohibits(self, g: Game, seat: int, user: int, card_name: str) -> bool:
        return card_name in ("顺手牵羊", "乐不思蜀")


@register
class LianYing(Skill):
    """连营: 每当你失去最后的手牌后，你可以摸一张牌。"""

    name = "连营"
    events = ("hand_emptied",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return bool(trig.data.get("seat") == seat and not g.players[seat].hand)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        draw(g, seat, 1, reason=self.name)


@register
class JieYin(Procedure):
    """结姻: 出牌阶段限一次，你可以弃置两张手牌并选择一名已受伤的男性角色：你与其各回复1点
    体力。"""

    name = "结姻"
    once_per_turn = True

    def _males(self, g: Game, seat: int) -> list[int]:
        return [
            s
            for s in order_from(g, seat, include_start=False)
            if g.players[s].gender == "male" and g.players[s].hp < g.players[s].max_hp
        ]

    def can_activate(self, g: Game, seat: int) -> bool:
        return (
            not used(g, seat, self.name)
            and len(g.players[seat].hand) >= 2
            and bool(self._males(g, seat))
        )

    def cost(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return list(g.players[seat].hand), 2, 2

    def choices(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return self._males(g, seat), 1, 1

    def refuse_choice(self, g: Game, seat: int, f: SkillFrame, t: int) -> str:
        p = g.players[t]
        if t == seat or p.gender != "male" or p.hp >= p.max_hp:
            return f"{self.name} chooses another, wounded male character: seat {t} is not one"
        return super().refuse_choice(g, seat, f, t)

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        push(g, JieYinFrame(seat=seat, target=f.seats[0], cards=f.cards, skill=self.name))


class JieYinFrame(Frame, tag="jieyin"):
    """Discard the two cards; the target, then the user, recover 1."""

    seat: int
    target: int
    cards: list[int] = msgspec.field(default_factory=list)
    skill: str = ""

    def start(self, g: Game) -> None:
        self.then(self.both_recover)
        discard_from(g, self.seat, self.cards, reason=self.skill)

    def both_recover(self, g: Game) -> None:
        pop(g)
        recover(g, self.target, 1)
        recover(g, self.seat, 1)


@register
class XiaoJi(Skill):
    """枭姬: 每当你失去一张装备区里的牌后，你可以摸两张牌。"""

    name = "枭姬"
    events = ("equip_lost",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return bool(trig.data.get("seat") == seat)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        draw(g, seat, 2, reason=self.name)
