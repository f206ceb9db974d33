"""Seed 003 card texts that differ from the standard ones (REFERENCE §4.1), for ``chengtian``
games only: 乐不思蜀 seals a battlefield general, 火攻 discards any card of the suit, 走马换将 is
new, the mounts raise the hand limit, 白鸽 shields its holder. The other cards are the standard
specs; "no distance" comes from ``Ruleset.measures_distance``.
"""

from __future__ import annotations

from typing import Any

from ...cards.equipment import EquipSpec
from ...cards.tricks import FireAttack, FireAttackEffect, TrickSpec
from ...core.delayed import DelayedResolve, DelayedSpec, place
from ...core.engine import push
from ...core.skills import Skill, register
from ...core.state import Game
from ...core.use import UseCard, register_card_for
from ...core.vcard import VCard
from ...core.zones import LEAVE_HOOKS, draw, move
from .camp import bench, camp_of, deploy, discard_seal, refresh_skills, seal_card

RULESET = "chengtian"


@register_card_for(RULESET)
class SealIndulgence(DelayedSpec):
    """乐不思蜀: 置入目标的判定区，并选择其一名战场武将。该牌在判定区期间，这名武将不能发动技能。
    目标的判定阶段进行判定：结果不为红桃，此牌继续留在判定区。"""

    name = "乐不思蜀"
    stance = "hostile"

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        use: UseCard = g.stack[use_idx]
        place(g, use.vc, t)
        # one battlefield general (battlefield_size 1): choosing it is not a choice
        g.players[t].marks["seal"] = use.vc.cards[0] + 1
        refresh_skills(g, t)

    def on_nullified(self, g: Game, f: DelayedResolve) -> None:
        move(g, [f.card], "processing", "discard", reason=self.name)
        discard_seal(g, f.seat)

    def on_judged(self, g: Game, f: DelayedResolve, hit: bool) -> None:
        if not hit:  # ♥: the seal ends
            move(g, [f.card], "processing", "discard", reason=self.name)
            discard_seal(g, f.seat)
            return
        move(g, [f.card], "processing", "judge", -1, f.seat, reason=self.name)
        if g.cards[f.card].name != self.name:
            g.as_name[f.card] = self.name


@register_card_for(RULESET)
class FireAttackAnyCard(FireAttack):
    """火攻: 目标展示一张手牌；你弃置一张与之同花色的牌（U-003-18: hand or equipment），则对其造成
    1 点火焰伤害。"""

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        if not g.options.get("fire_attack_any_card", True):
            super().effect(g, use_idx, t)  # the standard text: a hand card of the suit
            return
        push(g, FireAttackEffect(user=g.stack[use_idx].user, target=t, any_card=True))


@register_card_for(RULESET)
class SwitchGeneral(TrickSpec):
    """走马换将: 指定目标的一名战场武将，将其置于其军营底，然后令其上阵 1 名武将（来自军营顶，
    暗置）。若目标是使用者自己，使用者摸 1 张牌。"""

    name = "走马换将"

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, Any]) -> bool:
        return True  # yourself or the opponent; an empty camp leaves only the self-draw

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        user = g.stack[use_idx].user
        if camp_of(g.players[t]):  # U-003-17: with an empty camp the general stays
            # a self-target escaping its own seal is an interpretation (zouma_self_clears_seal)
            keep = t == user and not g.options.get("zouma_self_clears_seal", True)
            bench(g, t, keep_seal=keep)
            deploy(g, t, face_down=True)
        if t == user:
            draw(g, user, 1, reason="走马换将")


def _mount_bonus(g: Game, seat: int, name: str) -> int:
    cid = g.players[seat].equip.get("mount", -1)
    if cid < 0 or g.cards[cid].name != name:
        return 0
    return int(g.options.get("mount_hand_limit", 1))


@register
class Dilu(Skill):
    """的卢 (seed 003): 装备后，你的手牌上限 +1 (only from the mount slot)."""

    name = "的卢"
    optional = False

    def hand_limit(self, g: Game, seat: int) -> int:
        return _mount_bonus(g, seat, self.name)


@register
class Zixing(Skill):
    """紫骍 (seed 003): 装备后，你的手牌上限 +1 (only from the mount slot)."""

    name = "紫骍"
    optional = False

    def hand_limit(self, g: Game, seat: int) -> int:
        return _mount_bonus(g, seat, self.name)


@register_card_for(RULESET)
class BaigeCard(EquipSpec):
    """白鸽: a temporary mount produced by general skills; never used from a hand."""

    name = "白鸽"

    def can_use(self, g: Game, user: int, vc: VCard) -> bool:
        return False


@register
class Baige(Skill):
    """白鸽: 锁定技，你不能成为对手拼点的目标，你装备区的其他游戏牌不会被对手的游戏牌和武将技能
    影响 (the protection itself is ``ChengTian.equip_protected``)."""

    name = "白鸽"
    optional = False

    def prohibits(self, g: Game, seat: int, user: int, card_name: str) -> bool:
        return card_name == "拼点" and user != seat


def holds_baige(g: Game, seat: int) -> bool:
    """Whether ``seat`` has 白鸽 equipped."""
    cid = g.players[seat].equip.get("mount", -1)
    return cid >= 0 and g.cards[cid].name == "白鸽"


def give_baige(g: Game, seat: int) -> bool:
    """A skill produces 白鸽 for ``seat``: it leaves the removed cards for the mount slot
    (replacing the mount there). False if none is left out of the game."""
    spare = [c for c in g.removed if g.cards[c].name == "白鸽"]
    if not spare:
        return False
    old = g.players[seat].equip.get("mount", -1)
    if old >= 0:
        move(g, [old], "equip", "discard", seat, reason="replaced")
    move(g, [spare[0]], "removed", "equip", -1, seat, reason="白鸽", slot="mount")
    return True


def _baige_left(g: Game, seat: int, cid: int) -> None:
    """U-003-12: a temporary card leaving the equipment area is removed from the game."""
    if cid in g.discard:
        move(g, [cid], "discard", "removed", reason="白鸽")
    elif cid in g.processing:
        move(g, [cid], "processing", "removed", reason="白鸽")
    else:
        for p in g.players:
            if cid in p.hand:
                move(g, [cid], "hand", "removed", p.seat, reason="白鸽")


LEAVE_HOOKS["白鸽"] = _baige_left


def sealed(g: Game, seat: int) -> bool:
    """Whether ``seat``'s battlefield general is sealed by 乐不思蜀."""
    return seal_card(g, seat) >= 0
