"""Ordinary tricks (§2.2): every one is answered by 无懈可击 per target before it takes effect."""

from __future__ import annotations

from ..core.choices import Choice, register_choice
from ..core.damage import damage, recover
from ..core.engine import answer, ask_choice, ask_discard, pop
from ..core.events import CardShown, CardsMoved, ChainToggled
from ..core.keys import card_keys, card_of, cards_of
from ..core.pick import PickCard
from ..core.query import (
    card_count,
    distance_ok,
    order_from,
    prohibited,
    reached,
    reaches_any,
    skill_objs,
)
from ..core.refusal import out_of_range, target_refusal, too_far
from ..core.respond import AskCard, demand
from ..core.state import Frame, Game
from ..core.use import CardSpec, UseCard, register_card, use_card
from ..core.vcard import VCard
from ..core.zones import discard_from, draw, move, take_top


class TrickSpec(CardSpec):
    """A non-delayed trick."""

    kind = "trick"


@register_card
class Dismantlement(TrickSpec):
    """过河拆桥: discard one card (hand blindly, equipment or judgement face up) of another."""

    name = "过河拆桥"
    stance = "hostile"

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> bool:
        return t != user and card_count(g, t, judge=True) > 0

    def refuse_target(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> str:
        if not target_refusal(g, user, t, vc.name) and not card_count(g, t, judge=True):
            return f"seat {t} has no cards"
        return super().refuse_target(g, user, vc, t, data)

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.stack.append(TakeEffect(user=g.stack[use_idx].user, target=t, keep=False))


@register_card
class Snatch(TrickSpec):
    """顺手牵羊: take one card of another character at distance ≤ 1."""

    name = "顺手牵羊"
    stance = "hostile"

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> bool:
        return t != user and distance_ok(g, user, t, self.name) and card_count(g, t, judge=True) > 0

    def refuse_target(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> str:
        why = target_refusal(g, user, t, vc.name) or too_far(g, user, t, vc.name)
        if not why and not card_count(g, t, judge=True):
            why = f"seat {t} has no cards"
        return why or super().refuse_target(g, user, vc, t, data)

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.stack.append(TakeEffect(user=g.stack[use_idx].user, target=t, keep=True))


class TakeEffect(Frame, tag="take_effect"):
    """Pick one of ``target``'s cards, then discard it or take it: 过河拆桥 / 顺手牵羊 (judgement
    area included), or a skill such as 反馈 (``judge=False``, ``reason`` = the skill)."""

    user: int
    target: int
    keep: bool
    judge: bool = True
    reason: str = ""

    def start(self, g: Game) -> None:
        self.step = "picked"
        g.stack.append(
            PickCard(
                chooser=self.user,
                owner=self.target,
                judge=self.judge,
                reason=self.reason or ("顺手牵羊" if self.keep else "过河拆桥"),
            ),
        )

    def picked(self, g: Game) -> None:
        cid = g.ret
        pop(g)
        if cid is None or cid < 0:
            return
        take_card(g, self.user, self.target, cid, keep=self.keep, reason=self.reason)


def take_card(g: Game, user: int, owner: int, cid: int, keep: bool, reason: str = "") -> None:
    """Discard ``owner``'s card ``cid`` or move it into ``user``'s hand (a hand card stays
    hidden from everyone but the two seats)."""
    p = g.players[owner]
    zone = "hand" if cid in p.hand else "equip" if cid in p.equip.values() else "judge"
    if keep:
        seen = [user, owner] if zone == "hand" else None
        move(g, [cid], zone, "hand", owner, user, reason=reason or "take", seen_by=seen)
    else:
        move(g, [cid], zone, "discard", owner, reason=reason or "dismantle")


@register_card
class ExNihilo(TrickSpec):
    """无中生有: draw two cards."""

    name = "无中生有"
    stance = "helpful"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        return [user]

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        draw(g, t, 2, reason="无中生有")


@register_card
class Duel(TrickSpec):
    """决斗: starting with the target, you and it alternately play 杀; the first who does not
    takes 1 damage from the other."""

    name = "决斗"
    stance = "hostile"

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.stack.append(DuelEffect(user=g.stack[use_idx].user, target=t, turn=t))


def slashes_needed(g: Game, opponent: int) -> int:
    """杀 a 决斗 side must play each time: two if the opponent has 无双-type skills."""
    return 2 if any(getattr(s, "double_duel", False) for s in skill_objs(g, opponent)) else 1


class DuelEffect(Frame, tag="duel_effect"):
    """The 决斗 exchange; ``turn`` is the seat that must play next."""

    user: int
    target: int
    turn: int
    got: int = 0

    def other(self) -> int:
        """The seat facing the one whose turn it is."""
        return self.user if self.turn == self.target else self.target

    def start(self, g: Game) -> None:
        self.ask_turn(g)

    def ask_turn(self, g: Game) -> None:
        """Ask the seat whose turn it is for a 杀, owed to the seat facing it."""
        self.step = "played"
        ask = AskCard(user=self.turn, need="杀", mode="play", source=self.other(), reason="决斗")
        if not demand(g, ask):
            self.played(g)

    def played(self, g: Game) -> None:
        other = self.other()
        if g.ret is None:  # lost the duel
            pop(g)
            if g.players[self.turn].alive:
                damage(
                    g, other if g.players[other].alive else -1, self.turn, 1, card="决斗", duel=True
                )
            return
        self.got += 1
        if self.got >= slashes_needed(g, other):
            self.turn, self.got = other, 0
        self.ask_turn(g)


@register_card
class Collateral(TrickSpec):
    """借刀杀人: a character A with a weapon uses a 杀 on B in its range, or gives you the weapon."""

    name = "借刀杀人"
    stance = "harmful"
    min_targets = 1
    max_targets = 1

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> bool:
        return t != user and "weapon" in g.players[t].equip and reaches_any(g, t, "杀")

    def second_targets(self, g: Game, use: UseCard) -> list[int]:
        return victims(g, (use.targets or [])[0])

    def refuse_target(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> str:
        why = target_refusal(g, user, t, vc.name)
        if not why and "weapon" not in g.players[t].equip:
            why = f"seat {t} has no weapon"
        if not why and not victims(g, t):
            why = f"no seat is within seat {t}'s attack range for its 杀"
        return why or super().refuse_target(g, user, vc, t, data)

    def refuse_second(self, g: Game, use: UseCard, t: int) -> str:
        wielder = (use.targets or [])[0]
        why = target_refusal(g, wielder, t, "杀") or out_of_range(g, wielder, t, "杀")
        return why or super().refuse_second(g, use, t)

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        use: UseCard = g.stack[use_idx]
        g.stack.append(CollateralEffect(user=use.user, wielder=t, victim=int(use.data["victim"])))


def victims(g: Game, wielder: int) -> list[int]:
    """Seats ``wielder`` could legally 杀 (the 借刀杀人 second target)."""
    return reached(g, wielder, "杀")


class CollateralEffect(Frame, tag="collateral_effect"):
    """The wielder uses a 杀 on the victim, or hands its weapon to the user."""

    user: int
    wielder: int
    victim: int

    def start(self, g: Game) -> None:
        self.step = "answered"
        if not g.players[self.victim].alive:
            g.ret = None
            return
        g.stack.append(
            AskCard(
                user=self.wielder,
                need="杀",
                mode="select",
                source=self.user,
                target=self.victim,
                reason="借刀杀人",
            ),
        )

    def answered(self, g: Game) -> None:
        vc = g.ret
        self.step = "done"
        if vc is not None:
            use_card(g, self.wielder, vc, [self.victim], counted=False, data={"no_distance": True})
            return
        w = g.players[self.wielder].equip.get("weapon", -1)
        if w >= 0 and g.players[self.user].alive:
            move(g, [w], "equip", "hand", self.wielder, self.user, reason="借刀杀人")

    def done(self, g: Game) -> None:
        pop(g)


class AOESpec(TrickSpec):
    """All other alive characters, from the user's next seat."""

    stance = "harmful"
    every_other = True

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        return order_from(g, user, include_start=False)


@register_card
class SavageAssault(AOESpec):
    """南蛮入侵: every other character plays a 杀 or takes 1 damage from you."""

    name = "南蛮入侵"
    need = "杀"

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.stack.append(
            DemandEffect(user=g.stack[use_idx].user, target=t, need=self.need, card=self.name)
        )


@register_card
class ArcheryAttack(SavageAssault):
    """万箭齐发: every other character plays a 闪 or takes 1 damage from you."""

    name = "万箭齐发"
    need = "闪"


class DemandEffect(Frame, tag="demand_effect"):
    """One target of 南蛮入侵/万箭齐发: play the card or take 1 damage."""

    user: int
    target: int
    need: str
    card: str

    def start(self, g: Game) -> None:
        self.step = "answered"
        ask = AskCard(
            user=self.target, need=self.need, mode="play", source=self.user, reason=self.card
        )
        if not demand(g, ask):
            self.answered(g)

    def answered(self, g: Game) -> None:
        missed = g.ret is None
        pop(g)
        if missed:
            damage(g, self.user, self.target, 1, card=self.card)


@register_card
class GodSalvation(TrickSpec):
    """桃园结义: every character recovers 1 HP."""

    name = "桃园结义"
    stance = "helpful"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        return order_from(g, user)

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        recover(g, t, 1)


@register_card
class AmazingGrace(TrickSpec):
    """五谷丰登: reveal one card per character; each in turn takes one."""

    name = "五谷丰登"
    stance = "helpful"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        return order_from(g, user)

    def before_effects(self, g: Game, use: UseCard) -> None:
        cards = take_top(g, len(use.targets or []))
        g.processing.extend(cards)
        use.data["revealed"] = cards
        g.out.append(
            CardsMoved(
                cards=cards, count=len(cards), src="draw", dst="processing", reason="五谷丰登"
            ),
        )

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.stack.append(GraceEffect(use=use_idx, target=t))

    def after_effects(self, g: Game, use: UseCard) -> None:
        left = [c for c in use.data.get("revealed", []) if c in g.processing]
        if left:
            move(g, left, "processing", "discard", reason="五谷丰登")


register_choice("五谷丰登", Choice("take"))


class GraceEffect(Frame, tag="grace_effect"):
    """One 五谷丰登 target takes one of the revealed cards."""

    use: int
    target: int

    def start(self, g: Game) -> None:
        use: UseCard = g.stack[self.use]
        left = [c for c in use.data.get("revealed", []) if c in g.processing]
        self.step = "taken"
        ask_choice(g, self.target, card_keys(left), about="五谷丰登")

    def taken(self, g: Game) -> None:
        picks = answer(g)
        pop(g)
        if picks:
            move(g, [card_of(picks[0])], "processing", "hand", -1, self.target, reason="五谷丰登")


@register_card
class Nullification(TrickSpec):
    """无懈可击: only in response (§1.13)."""

    name = "无懈可击"

    def can_use(self, g: Game, user: int, vc: VCard) -> bool:
        return False

    def refuse_use(self, g: Game, user: int, vc: VCard) -> str:
        return "无懈可击 is used only in answer to a trick"


@register_card
class IronChain(TrickSpec):
    """铁索连环: one or two characters toggle their chain state; or recast it (draw 1)."""

    name = "铁索连环"
    stance = "harmful"
    recastable = True
    min_targets = 1
    max_targets = 2

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> bool:
        return True

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        p = g.players[t]
        p.chained = not p.chained
        g.out.append(ChainToggled(seat=t, chained=p.chained))


@register_card
class FireAttack(TrickSpec):
    """火攻: the target shows a hand card; you may discard a hand card of that suit to deal it
    1 fire damage."""

    name = "火攻"
    stance = "hostile"

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> bool:
        hand = g.players[t].hand
        return bool(hand) and (t != user or any(c not in vc.cards for c in hand))

    def refuse_target(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> str:
        if not prohibited(g, t, user, vc.name) and g.players[t].alive:
            return f"seat {t} has no hand card to show"
        return super().refuse_target(g, user, vc, t, data)

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.stack.append(FireAttackEffect(user=g.stack[use_idx].user, target=t))


register_choice("火攻_show", Choice("show", name="火攻"))


class FireAttackEffect(Frame, tag="fire_attack_effect"):
    """火攻 on one target; ``any_card``: the user may pay with an equipped card of the suit too
    (seed 003's text)."""

    user: int
    target: int
    shown: int = -1
    any_card: bool = False

    def start(self, g: Game) -> None:
        t = g.players[self.target]
        if not t.hand:
            pop(g)
            return
        self.step = "shown_card"
        ask_choice(g, self.target, card_keys(t.hand), about="火攻_show")

    def shown_card(self, g: Game) -> None:
        self.shown = card_of(answer(g)[0])
        g.out.append(CardShown(seat=self.target, card=self.shown))
        suit = g.cards[self.shown].suit
        u = g.players[self.user]
        payable = list(u.hand) + (list(u.equip.values()) if self.any_card else [])
        self.step = "paid"
        of_suit = [c for c in payable if g.cards[c].suit == suit]
        ask_discard(g, self.user, of_suit, 1, reason="火攻", declinable=True, suit=suit)

    def paid(self, g: Game) -> None:
        picks = answer(g)
        self.step = "done"
        if picks:
            self.step = "burn"
            discard_from(g, self.user, cards_of(picks), reason="火攻")

    def burn(self, g: Game) -> None:
        """The user paid, and what losing the card fired has run (连营, 枭姬): the fire damage."""
        self.step = "done"
        damage(g, self.user, self.target, 1, "fire", card="火攻")

    def done(self, g: Game) -> None:
        pop(g)
