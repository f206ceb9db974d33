"""魏 generals' skills (standard edition): 曹操, 司马懿, 夏侯惇, 许褚, 郭嘉, 甄姬."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..cards.tricks import TakeEffect
from ..core.cards import color_of
from ..core.choices import Choice, register_choice
from ..core.damage import Damage, damage
from ..core.engine import answer, ask, ask_choice, ask_discard, emit, pop, push
from ..core.events import CardPlayed, SkillInvoked
from ..core.flow import DrawPhase
from ..core.judge import JUDGE_RULES, Judge
from ..core.keys import cards_of, seat_keys, seat_of
from ..core.query import card_count, order_from
from ..core.respond import AskCard
from ..core.skills import Skill, register
from ..core.state import Frame, Game
from ..core.triggers import Trigger, ctx_frame
from ..core.use import UseCard
from ..core.vcard import VCard
from ..core.zones import discard_from, draw, move
from .base import Conversion, Procedure, SkillFrame, opt

if TYPE_CHECKING:
    from ..core.redeal import Redeal

JUDGE_RULES["刚烈"] = lambda c: c.suit != "H"
JUDGE_RULES["洛神"] = lambda c: color_of(c.suit) == "black"


def _damage_to(g: Game, seat: int, trig: Trigger) -> Damage | None:
    d = ctx_frame(g, trig)
    return d if isinstance(d, Damage) and d.target == seat else None


@register
class JianXiong(Skill):
    """奸雄: 在你受到伤害后，你可以获得对你造成伤害的牌。"""

    name = "奸雄"
    events = ("damaged",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = _damage_to(g, seat, trig)
        return d is not None and bool(damage_cards(g, d))

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        move(
            g, damage_cards(g, ctx_frame(g, trig)), "processing", "hand", -1, seat, reason=self.name
        )


def damage_cards(g: Game, d: Damage) -> list[int]:
    """The physical cards of the damage still in the processing area: the damage's own, or
    (决斗, 南蛮入侵 …) those of the card use being resolved."""
    cards = d.cards
    if not cards and d.card:
        for fr in reversed(g.stack):
            if isinstance(fr, UseCard) and fr.vc.name == d.card:
                cards = fr.vc.cards
                break
    return [c for c in cards if c in g.processing]


@register
class HuJia(Skill):
    """护驾: 主公技，当你需要使用或打出【闪】时，你可以令其他魏势力角色选择是否打出一张【闪】
    （视为由你使用或打出）。 Helpers: the holder's faction, in turn order from its next seat."""

    name = "护驾"
    lord = True
    others_key = ""  # option: True = other characters only (A-000-03); else the holder too

    def helpers(self, g: Game, seat: int) -> list[int]:
        """The seats asked, in order."""
        fac = g.players[seat].faction
        out = [s for s in order_from(g, seat, include_start=False) if g.players[s].faction == fac]
        if not opt(g, self.others_key, True, seat):
            out.append(seat)
        return out

    def provides(self, g: Game, seat: int, ask: Any) -> bool:
        return ask.need == "闪" and bool(self.helpers(g, seat))

    def provide(self, g: Game, seat: int, ask: Any) -> None:
        emit(g, SkillInvoked(seat=seat, skill=self.name))
        push(g, HelpersAsk(seat=seat, skill=self.name, need="闪", order=self.helpers(g, seat)))


class HelpersAsk(Frame, tag="helpers_ask"):
    """Ask ``order`` one by one to play ``need`` for ``seat``; pops a virtual card or None."""

    seat: int
    skill: str
    need: str
    order: list[int] = msgspec.field(default_factory=list)
    i: int = 0

    def start(self, g: Game) -> None:
        """Ask the next helper still alive; none left: nothing is played."""
        while self.i < len(self.order) and not g.players[self.order[self.i]].alive:
            self.i += 1
        if self.i >= len(self.order):
            pop(g, None)
            return
        self.then(self.answered)
        push(
            g,
            AskCard(
                user=self.order[self.i],
                need=self.need,
                mode="play",
                source=self.seat,
                target=self.seat,
                reason=self.skill,
            ),
        )

    def answered(self, g: Game) -> None:
        vc = g.ret
        if vc is not None:
            pop(
                g,
                VCard(name=self.need, suit=vc.suit, color=vc.color, rank=vc.rank, skill=self.skill),
            )
            return
        self.i += 1
        self.goto(g, self.start)


@register
class FanKui(Skill):
    """反馈: 在你受到伤害后，你可以获得伤害来源的一张牌（手牌随机，装备任选）。"""

    name = "反馈"
    events = ("damaged",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = _damage_to(g, seat, trig)
        return (
            d is not None
            and d.source >= 0
            and d.source != seat
            and g.players[d.source].alive
            and card_count(g, d.source) > 0
        )

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        push(
            g,
            TakeEffect(
                user=seat,
                target=ctx_frame(g, trig).source,
                keep=True,
                judge=False,
                reason=self.name,
            ),
        )


@register
class GuiCai(Procedure):
    """鬼才: 在任意角色的判定牌生效前，你可以打出一张手牌代替之。"""

    name = "鬼才"
    events = ("judge_modify",)
    asks_itself = True

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return bool(g.players[seat].hand)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        self.start(g, seat, ctx=trig.ctx)

    def cost(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        return list(g.players[seat].hand), 1, 1

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        j = g.stack[f.ctx]
        assert isinstance(j, Judge)
        new = f.cards[0]
        c = g.cards[new]
        emit(
            g,
            CardPlayed(
                seat=seat, name=c.name, suit=c.suit, rank=c.rank, cards=[new], skill=self.name
            ),
        )
        move(g, [new], "hand", "processing", seat, reason=self.name)
        old, j.card = j.card, new
        if old in g.processing:
            move(g, [old], "processing", "discard", reason=self.name)


@register
class GangLie(Skill):
    """刚烈: 每当你受到一次伤害后，你可以进行判定：若结果不为♥，伤害来源选择一项：弃置两张手牌，
    或受到你造成的1点伤害。"""

    name = "刚烈"
    events = ("damaged",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = _damage_to(g, seat, trig)
        return d is not None and d.source >= 0 and g.players[d.source].alive

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        push(g, GangLieFrame(seat=seat, source=ctx_frame(g, trig).source, skill=self.name))


register_choice("刚烈", Choice("either", options={"discard": "discard_hand_2"}))


class GangLieFrame(Frame, tag="ganglie"):
    """Judge; not ♥ → the source discards two hand cards or takes 1 damage."""

    seat: int
    source: int
    skill: str

    def start(self, g: Game) -> None:
        self.then(self.judged)
        push(g, Judge(seat=self.seat, reason=self.skill))

    def judged(self, g: Game) -> None:
        src = g.players[self.source]
        if not g.ret or not src.alive:
            pop(g)
        # A-000-04: with fewer than two hand cards the source must take the damage
        elif len(src.hand) >= 2 or (
            opt(g, "ganglie_short_hand_discards", False, self.seat) and src.hand
        ):
            self.then(self.chosen)
            ask_choice(g, self.source, ["discard", "damage"], about=self.skill)
        else:
            self.take_damage(g)

    def chosen(self, g: Game) -> None:
        if answer(g) == ["discard"]:
            self.then(self.discarded)
            ask_discard(g, self.source, g.players[self.source].hand, 2, reason=self.skill)
        else:
            self.take_damage(g)

    def discarded(self, g: Game) -> None:
        pop(g)
        discard_from(g, self.source, cards_of(answer(g)), reason=self.skill)

    def take_damage(self, g: Game) -> None:
        pop(g)
        damage(g, self.seat, self.source, 1, card=self.skill)


@register
class LuoYi(Skill):
    """裸衣: 摸牌阶段，你可以少摸一张牌；若如此做，你为伤害来源的【杀】或【决斗】造成的伤害+1
    （本回合；旧版/红楼梦：该回合的出牌阶段，选项 ``luoyi_play_phase_only``）。"""

    name = "裸衣"
    events = ("draw_count", "damage_causing")

    def is_optional(self, g: Game, seat: int, trig: Any) -> bool:
        return bool(trig.point == "draw_count")

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        fr = ctx_frame(g, trig)
        if trig.point == "draw_count":
            return isinstance(fr, DrawPhase) and fr.seat == seat and fr.n >= 1
        if not g.players[seat].marks.get("t:裸衣") or not isinstance(fr, Damage):
            return False
        if fr.source != seat or not (fr.slash or fr.duel) or not fr.own_hit(g):
            return False
        return not opt(g, "luoyi_play_phase_only", False, seat) or (
            g.current == seat and g.phase == "play"
        )

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        fr = ctx_frame(g, trig)
        if trig.point == "draw_count":
            fr.n -= 1
            g.players[seat].marks["t:裸衣"] = 1
        else:
            fr.amount += 1


@register
class TianDu(Skill):
    """天妒: 在你的判定牌生效后，你可以获得此牌（选项 ``tiandu_any_judgement``：任何判定牌）。"""

    name = "天妒"
    events = ("judge_done",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        j = ctx_frame(g, trig)
        if not isinstance(j, Judge) or j.card not in g.processing:
            return False
        return j.seat == seat or bool(opt(g, "tiandu_any_judgement", False, seat))

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        j = ctx_frame(g, trig)
        move(g, [j.card], "processing", "hand", -1, seat, reason=self.name)


@register
class YiJi(Skill):
    """遗计: 每当你受到1点伤害后，你可以摸两张牌，然后将其中一张交给任意一名角色，再将另一张
    交给任意一名角色。"""

    name = "遗计"
    events = ("damaged",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return _damage_to(g, seat, trig) is not None

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        d = ctx_frame(g, trig)
        push(g, YiJiFrame(seat=seat, left=d.dealt, skill=self.name))


register_choice("遗计", Choice("give"))


class YiJiFrame(Frame, tag="yiji"):
    """Per point: draw two, give each to a seat of your choice; later points are offered again."""

    seat: int
    left: int
    skill: str
    drawn: list[int] = msgspec.field(default_factory=list)

    def start(self, g: Game) -> None:
        """A point: draw two."""
        self.left -= 1
        self.drawn = draw(g, self.seat, 2, reason=self.skill)
        self.goto(g, self.give)

    def give(self, g: Game) -> None:
        """Give the next drawn card still in hand; then offer the next point."""
        p = g.players[self.seat]
        self.drawn = [c for c in self.drawn if c in p.hand]
        if self.drawn and p.alive:
            self.then(self.given)
            ask(
                g,
                self.seat,
                "choose",
                seat_keys(order_from(g, self.seat)),
                declinable=False,
                info={"about": self.skill, "card": self.drawn[0]},
            )
        elif self.left <= 0 or not p.alive:
            pop(g)
        else:
            self.then(self.again)
            ask(g, self.seat, "confirm", ["yes"], info={"skill": self.skill, "point": "damaged"})

    def redeal(self, g: Game, rd: Redeal) -> None:
        """The cards drawn are seen by their drawer alone: for another seat, cards dealt into
        the drawer's hand again."""
        if rd.seat != self.seat:
            self.drawn = [rd.card(g, c) for c in self.drawn]

    def given(self, g: Game) -> None:
        picks = answer(g)
        cid = self.drawn.pop(0)
        to = seat_of(picks[0])
        if to != self.seat and cid in g.players[self.seat].hand:
            move(
                g, [cid], "hand", "hand", self.seat, to, reason=self.skill, seen_by=[self.seat, to]
            )
        self.then(self.give)

    def again(self, g: Game) -> None:
        if answer(g):
            emit(g, SkillInvoked(seat=self.seat, skill=self.skill))
            self.then(self.start)
        else:
            pop(g)


@register
class QingGuo(Conversion):
    """倾国: 你可以将一张黑色手牌当【闪】使用或打出。"""

    name = "倾国"
    takes = "a black hand card"
    converts = "闪"

    def card_ok(self, g: Game, seat: int, cid: int, as_name: str) -> bool:
        return color_of(g.cards[cid].suit) == "black"


@register
class LuoShen(Skill):
    """洛神: 准备阶段，你可以进行判定：若结果为黑色，判定牌生效后你获得之，然后你可以再次发动
    「洛神」。"""

    name = "洛神"
    events = ("phase_start", "judge_done")

    def is_optional(self, g: Game, seat: int, trig: Any) -> bool:
        return bool(trig.point == "phase_start")

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        if trig.point == "phase_start":
            return bool(trig.data.get("phase") == "start" and g.current == seat)
        j = ctx_frame(g, trig)
        return (
            isinstance(j, Judge)
            and j.reason == self.name
            and j.seat == seat
            and j.result
            and j.card in g.processing
        )

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        if trig.point == "phase_start":
            push(g, LuoShenFrame(seat=seat, skill=self.name))
            return
        j = ctx_frame(g, trig)
        move(g, [j.card], "processing", "hand", -1, seat, reason=self.name)


class LuoShenFrame(Frame, tag="luoshen"):
    """Judge; black → (the card is taken at judge_done) and you may judge again."""

    seat: int
    skill: str

    def start(self, g: Game) -> None:
        self.then(self.judged)
        push(g, Judge(seat=self.seat, reason=self.skill))

    def judged(self, g: Game) -> None:
        if not g.ret or not g.players[self.seat].alive:
            pop(g)
            return
        self.then(self.again)
        ask(g, self.seat, "confirm", ["yes"], info={"skill": self.skill, "point": "again"})

    def again(self, g: Game) -> None:
        if answer(g):
            emit(g, SkillInvoked(seat=self.seat, skill=self.skill))
            self.start(g)
        else:
            pop(g)
