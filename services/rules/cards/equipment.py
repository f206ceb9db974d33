"""Equipment (§2.4–2.6): using one puts it in its slot (the old one is discarded); effects are
skills named after the card, active while it is equipped."""

from __future__ import annotations

from typing import Any

from ..core.cards import color_of
from ..core.choices import Choice, register_choice
from ..core.damage import Damage, recover
from ..core.engine import answer, ask, ask_choice, ask_discard, pop
from ..core.events import SkillInvoked
from ..core.judge import JUDGE_RULES, Judge
from ..core.keys import card_key, card_keys, cards_of
from ..core.pick import PickCard
from ..core.query import RANGE_OF_WEAPON, card_count
from ..core.refusal import hand_refusal
from ..core.registry import ruleset_of
from ..core.respond import AskCard
from ..core.skills import Skill, register
from ..core.state import Decision, Frame, Game
from ..core.triggers import Trigger, ctx_frame
from ..core.use import IGNORE_ARMOR, CardSpec, UseCard, register_card, specs_of, use_card
from ..core.vcard import VCard, converted, is_slash
from ..core.zones import LEAVE_HOOKS, discard_from, draw, move
from .basic import UNLIMITED

RANGE_OF_WEAPON.update(
    {
        "诸葛连弩": 1,
        "青釭剑": 2,
        "雌雄双股剑": 2,
        "寒冰剑": 2,
        "古锭刀": 2,
        "贯石斧": 3,
        "青龙偃月刀": 3,
        "丈八蛇矛": 3,
        "方天画戟": 4,
        "朱雀羽扇": 4,
        "麒麟弓": 5,
    }
)


class EquipSpec(CardSpec):
    """Any equipment card: target yourself; it goes into its slot."""

    kind = "equip"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        return [user]

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        use: UseCard = g.stack[use_idx]
        cid = use.vc.cards[0]
        slot = slot_of(g, cid)
        old = g.players[t].equip.get(slot, -1)
        if old >= 0:
            move(g, [old], "equip", "discard", t, reason="replaced")
        move(g, [cid], "processing", "equip", -1, t, reason="equip", slot=slot)


def slot_of(g: Game, cid: int) -> str:
    """The equipment slot a card goes into (a ruleset may map slots differently)."""
    return ruleset_of(g).equip_slot(g.cards[cid].subtype)


for _name in (
    "诸葛连弩",
    "青釭剑",
    "雌雄双股剑",
    "寒冰剑",
    "古锭刀",
    "贯石斧",
    "青龙偃月刀",
    "丈八蛇矛",
    "方天画戟",
    "朱雀羽扇",
    "麒麟弓",
    "八卦阵",
    "仁王盾",
    "藤甲",
    "白银狮子",
    "的卢",
    "绝影",
    "爪黄飞电",
    "骅骝",
    "赤兔",
    "大宛",
    "紫骍",
):
    register_card(
        type(f"Equip_{_name}", (EquipSpec,), {"name": _name, "__doc__": f"{_name}: equipment."})
    )


def _use(trig: Trigger, g: Game) -> UseCard | None:
    fr = ctx_frame(g, trig)
    return fr if isinstance(fr, UseCard) else None


@register
class Crossbow(Skill):
    """诸葛连弩: 锁定技, no limit on the 杀 you use in your play phase."""

    name = "诸葛连弩"
    optional = False

    def slash_limit(self, g: Game, seat: int) -> int:
        return UNLIMITED


@register
class QinggangSword(Skill):
    """青釭剑: 锁定技, your 杀 ignores the target's armor."""

    name = "青釭剑"
    events = ("targeted",)
    optional = False

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        use = _use(trig, g)
        if use is None or use.user != seat or not is_slash(use.vc.name):
            return False
        t = (use.targets or [])[trig.data["i"]]
        armor = g.players[t].equip.get("armor", -1)
        return armor < 0 or not ruleset_of(g).equip_protected(g, t, seat, armor)  # 白鸽

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        use = ctx_frame(g, trig)
        use.tflags[trig.data["i"]] |= IGNORE_ARMOR


@register
class DoubleSwords(Skill):
    """雌雄双股剑: after your 杀 targets the opposite gender, it discards a hand card or you draw 1."""

    name = "雌雄双股剑"
    events = ("targeted",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        use = _use(trig, g)
        if use is None or use.user != seat or not is_slash(use.vc.name):
            return False
        t: int = (use.targets or [])[trig.data["i"]]
        return bool(g.players[t].gender != g.players[seat].gender)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        use = ctx_frame(g, trig)
        g.stack.append(DoubleSwordsChoice(user=seat, target=(use.targets or [])[trig.data["i"]]))


register_choice(
    "雌雄双股剑", Choice("either", options={"discard": "discard_hand", "draw": "user_draws"})
)


class DoubleSwordsChoice(Frame, tag="double_swords"):
    """The 雌雄双股剑 target discards a hand card, or lets the user draw one."""

    user: int
    target: int

    def start(self, g: Game) -> None:
        hand = g.players[self.target].hand
        self.step = "chosen"
        ask(
            g,
            self.target,
            "choose",
            ["discard", "draw"] if hand else ["draw"],
            declinable=False,
            info={"about": "雌雄双股剑"},
        )

    def chosen(self, g: Game) -> None:
        hand = g.players[self.target].hand
        if answer(g) == ["discard"] and hand:
            self.step = "discarded"
            ask_discard(g, self.target, hand, 1, reason="雌雄双股剑")
            return
        pop(g)
        draw(g, self.user, 1, reason="雌雄双股剑")

    def discarded(self, g: Game) -> None:
        picks = answer(g)
        pop(g)
        discard_from(g, self.target, cards_of(picks), reason="雌雄双股剑")


def _slash_damage(g: Game, seat: int, trig: Trigger) -> Damage | None:
    """The damage of ``seat``'s own 杀 hit, if that is what triggers (A-STD-03: not a damage
    propagated through a chain, ``Damage.own_hit``)."""
    fr = ctx_frame(g, trig)
    ok = isinstance(fr, Damage) and fr.slash and fr.source == seat and fr.own_hit(g)
    return fr if ok else None


@register
class IceSword(Skill):
    """寒冰剑: when your 杀 would damage a target with cards, you may prevent it and discard two of
    its cards, one at a time (hand or equipment, never the judgement area)."""

    name = "寒冰剑"
    events = ("damage_causing",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = _slash_damage(g, seat, trig)
        return d is not None and card_count(g, d.target) > 0

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        d = ctx_frame(g, trig)
        d.prevented = True
        g.stack.append(IceSwordDiscard(user=seat, target=d.target))


class IceSwordDiscard(Frame, tag="ice_sword"):
    """Discard up to two of the target's cards, one after another."""

    user: int
    target: int
    n: int = 0

    def start(self, g: Game) -> None:
        if self.n >= 2 or card_count(g, self.target) == 0:
            pop(g)
            return
        self.step = "picked"
        g.stack.append(PickCard(chooser=self.user, owner=self.target, reason="寒冰剑"))

    def picked(self, g: Game) -> None:
        # discard in this step, go on in the next (枭姬/连营 may fire in between)
        self.step = "start"
        cid = g.ret
        self.n += 1
        if cid >= 0:
            p = g.players[self.target]
            move(
                g,
                [cid],
                "hand" if cid in p.hand else "equip",
                "discard",
                self.target,
                reason="寒冰剑",
            )


@register
class GudingBlade(Skill):
    """古锭刀: 锁定技, your 杀 deals +1 damage to a target with no hand cards."""

    name = "古锭刀"
    events = ("damage_causing",)
    optional = False

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = _slash_damage(g, seat, trig)
        return d is not None and not g.players[d.target].hand

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        ctx_frame(g, trig).amount += 1


@register
class KylinBow(Skill):
    """麒麟弓: when your 杀 deals damage, you may discard one horse of the target."""

    name = "麒麟弓"
    events = ("damage_causing",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = _slash_damage(g, seat, trig)
        eq = g.players[d.target].equip if d is not None else {}
        return d is not None and ("plus" in eq or "minus" in eq)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        d = ctx_frame(g, trig)
        g.stack.append(KylinChoice(user=seat, target=d.target))


class KylinChoice(Frame, tag="kylin_bow"):
    """Pick which horse 麒麟弓 discards."""

    user: int
    target: int

    def start(self, g: Game) -> None:
        eq = g.players[self.target].equip
        self.step = "chosen"
        horses = [eq[s] for s in ("plus", "minus") if s in eq]
        ask_choice(g, self.user, card_keys(horses), about="麒麟弓")

    def chosen(self, g: Game) -> None:
        picks = answer(g)
        pop(g)
        if picks:
            move(g, cards_of(picks), "equip", "discard", self.target, reason="麒麟弓")


@register
class Axe(Skill):
    """贯石斧: after your 杀 is dodged, you may discard two cards (not the axe) so it still hits."""

    name = "贯石斧"
    events = ("slash_dodged",)
    asks_itself = True

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return card_count(g, seat) - 1 >= 2

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        g.stack.append(AxeDiscard(user=seat, effect=trig.ctx))


class AxeDiscard(Frame, tag="axe"):
    """Choose the two cards for 贯石斧 (declining = not using it)."""

    user: int
    effect: int

    def start(self, g: Game) -> None:
        p = g.players[self.user]
        self.step = "chosen"
        axe = p.equip.get("weapon", -1)
        cards = list(p.hand) + [c for c in p.equip.values() if c != axe]
        ask(g, self.user, "cards", card_keys(cards), 2, 2, info={"skill": "贯石斧"})

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        if pick == card_key(g.players[self.user].equip.get("weapon", -1)):
            return "贯石斧 discards two other cards, not itself"
        return hand_refusal(g, self.user, pick)

    def chosen(self, g: Game) -> None:
        picks = answer(g)
        pop(g)
        if picks:
            g.out.append(SkillInvoked(seat=self.user, skill="贯石斧"))
            discard_from(g, self.user, cards_of(picks), reason="贯石斧")
            g.stack[self.effect].forced = True


@register
class Blade(Skill):
    """青龙偃月刀: after your 杀 is dodged, you may use another 杀 on the same target (not
    counted, no distance limit) — repeatable."""

    name = "青龙偃月刀"
    events = ("slash_dodged",)
    asks_itself = True

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        eff = ctx_frame(g, trig)
        g.stack.append(BladeFollow(user=seat, target=eff.target))


class BladeFollow(Frame, tag="blade"):
    """Offer the follow-up 杀 of 青龙偃月刀."""

    user: int
    target: int

    def start(self, g: Game) -> None:
        if not g.players[self.target].alive:
            pop(g)
            return
        self.step = "answered"
        g.stack.append(
            AskCard(
                user=self.user, need="杀", mode="select", target=self.target, reason="青龙偃月刀"
            ),
        )

    def answered(self, g: Game) -> None:
        vc = g.ret
        pop(g)
        if vc is not None:
            g.out.append(SkillInvoked(seat=self.user, skill="青龙偃月刀", targets=[self.target]))
            use_card(g, self.user, vc, [self.target], counted=False, data={"no_distance": True})


@register
class Spear(Skill):
    """丈八蛇矛: you may use or play two hand cards as one 杀."""

    name = "丈八蛇矛"

    def provides(self, g: Game, seat: int, ask: Any) -> bool:
        return ask.need == "杀" and len(g.players[seat].hand) >= 2

    def provide(self, g: Game, seat: int, ask: Any) -> None:
        g.stack.append(SpearCards(user=seat))

    def can_activate(self, g: Game, seat: int) -> bool:
        if len(g.players[seat].hand) < 2:
            return False
        return specs_of(g)["杀"].can_use(
            g, seat, VCard(name="杀", cards=list(g.players[seat].hand))
        )

    def activate(self, g: Game, seat: int) -> None:
        g.stack.append(SpearCards(user=seat, use=True))


class SpearCards(Frame, tag="spear"):
    """Pick the two hand cards for 丈八蛇矛; then use the 杀 (play phase) or hand it back."""

    user: int
    use: bool = False

    def start(self, g: Game) -> None:
        self.step = "chosen"
        ask(
            g,
            self.user,
            "cards",
            card_keys(g.players[self.user].hand),
            2,
            2,
            info={"skill": "丈八蛇矛", "as": "杀"},
        )

    def chosen(self, g: Game) -> None:
        picks = answer(g)
        pop(g, None)
        if not picks:
            return
        vc = converted(g, "杀", cards_of(picks), "丈八蛇矛")
        if self.use:
            use_card(g, self.user, vc)
        else:
            g.ret = vc


@register
class Halberd(Skill):
    """方天画戟: 锁定技, when the 杀 you use is your last hand card(s), up to two more targets."""

    name = "方天画戟"
    optional = False

    def target_count(self, g: Game, seat: int, vc: VCard) -> int:
        hand = g.players[seat].hand
        return 2 if is_slash(vc.name) and hand and set(hand) <= set(vc.cards) else 0


@register
class Fan(Skill):
    """朱雀羽扇: when you use a normal 杀, you may make it a 火杀. With the option
    ``fan_play_phase_only`` (seed 003: "出牌阶段，你可以发动此装备，将一张未被转化的普通【杀】转化为
    火【杀】使用") only in your play phase and only for a 杀 that is one unconverted card."""

    name = "朱雀羽扇"
    events = ("card_using",)

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        use = _use(trig, g)
        if use is None or use.user != seat or use.vc.name != "杀":
            return False
        if not g.options.get("fan_play_phase_only", False):
            return True
        vc = use.vc
        return (
            g.phase == "play"
            and g.current == seat
            and not vc.skill
            and len(vc.cards) == 1
            and g.cards[vc.cards[0]].name == "杀"
        )

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        ctx_frame(g, trig).vc.name = "火杀"


JUDGE_RULES["八卦阵"] = lambda c: color_of(c.suit) == "red"  # as if a 闪 was used


@register
class EightDiagram(Skill):
    """八卦阵: when you need to use or play a 闪, you may judge: red → as if you did."""

    name = "八卦阵"
    armor = True

    def provides(self, g: Game, seat: int, ask: Any) -> bool:
        return ask.need == "闪" and not ask.ignore_armor

    def provide(self, g: Game, seat: int, ask: Any) -> None:
        g.stack.append(EightDiagramJudge(seat=seat))


class EightDiagramJudge(Frame, tag="eight_diagram"):
    """Judge for 八卦阵; pops a virtual 闪 on red."""

    seat: int

    def start(self, g: Game) -> None:
        self.step = "judged"
        g.out.append(SkillInvoked(seat=self.seat, skill="八卦阵"))
        g.stack.append(Judge(seat=self.seat, reason="八卦阵"))

    def judged(self, g: Game) -> None:
        pop(g, VCard(name="闪", skill="八卦阵") if g.ret else None)


@register
class NiohShield(Skill):
    """仁王盾: 锁定技, black 杀 are ineffective against you."""

    name = "仁王盾"
    optional = False
    armor = True

    def card_ineffective(self, g: Game, seat: int, vc: VCard) -> bool:
        return is_slash(vc.name) and vc.color == "black"


def _armor_damage(g: Game, seat: int, trig: Trigger) -> Any:
    d = ctx_frame(g, trig)
    return None if d.ignore_armor or d.target != seat else d


@register
class Vine(Skill):
    """藤甲: 锁定技, normal 杀, 南蛮入侵 and 万箭齐发 are ineffective; fire damage to you is +1."""

    name = "藤甲"
    events = ("damage_taking",)
    optional = False
    armor = True

    def card_ineffective(self, g: Game, seat: int, vc: VCard) -> bool:
        return vc.name in ("杀", "南蛮入侵", "万箭齐发")

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = _armor_damage(g, seat, trig)
        return d is not None and d.nature == "fire"

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        ctx_frame(g, trig).amount += 1


@register
class SilverLion(Skill):
    """白银狮子: 锁定技, damage greater than 1 to you becomes 1; when it leaves your equipment
    area you recover 1 HP."""

    name = "白银狮子"
    events = ("damage_taking",)
    optional = False
    armor = True

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        d = _armor_damage(g, seat, trig)
        return d is not None and d.amount > 1

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        ctx_frame(g, trig).amount = 1


def _silver_lion_left(g: Game, seat: int, cid: int) -> None:
    if seat >= 0 and g.players[seat].alive:
        recover(g, seat, 1)


LEAVE_HOOKS["白银狮子"] = _silver_lion_left
