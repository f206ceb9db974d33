"""Basic cards (§2.1): 杀 (and 火杀, 雷杀), 闪, 桃, 酒."""

from __future__ import annotations

from ..core.damage import damage
from ..core.engine import emit, handler, pop, push
from ..core.events import Dodged
from ..core.query import attack_range, distance, in_range, order_from, prohibited, with_hook
from ..core.respond import AskCard
from ..core.ruleset import ruleset_of
from ..core.state import Frame, Game
from ..core.triggers import fire
from ..core.use import IGNORE_ARMOR, NO_DODGE, TWO_DODGE, CardSpec, UseCard, register_card
from ..core.vcard import VCard, nature_of

UNLIMITED = 1000


def slash_limit(g: Game, seat: int) -> int:
    """How many 杀 ``seat`` may use in its play phase (§1.6)."""
    return 1 + sum(s.slash_limit(g, seat) for s in with_hook(g, seat, "slash_limit"))


def armor_name(g: Game, seat: int) -> str:
    """The name of ``seat``'s equipped armor, or ""."""
    a = g.players[seat].equip.get("armor", -1)
    return g.cards[a].name if a >= 0 else ""


@register_card
class Slash(CardSpec):
    """杀: one other character in attack range uses 闪 or takes 1 damage from you."""

    name = "杀"

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> bool:
        return t != user and (bool(data.get("no_distance")) or in_range(g, user, t))

    def can_use(self, g: Game, user: int, vc: VCard) -> bool:
        if g.players[user].marks.get("t:slash", 0) >= slash_limit(g, user):
            return False
        if type(self).target_ok is not Slash.target_ok:
            return super().can_use(g, user, vc)
        reach = attack_range(g, user)  # once, not per target (the hot path of play options)
        return any(
            distance(g, user, t) <= reach and not prohibited(g, t, user, vc.name)
            for t in order_from(g, user, include_start=False)
        )

    def target_range(self, g: Game, user: int, vc: VCard) -> tuple[int, int]:
        extra = sum(s.target_count(g, user, vc.name) for s in with_hook(g, user, "target_count"))
        p = g.players[user]
        w = p.equip.get("weapon", -1)
        if w >= 0 and g.cards[w].name == "方天画戟" and p.hand and set(p.hand) <= set(vc.cards):
            extra += 2
        return 1, 1 + extra

    def on_declare(self, g: Game, use: UseCard) -> None:
        p = g.players[use.user]
        if use.counted and g.phase == "play" and g.current == use.user:
            p.marks["t:slash"] = p.marks.get("t:slash", 0) + 1
        if p.marks.pop("t:wine", 0):
            use.extra += 1

    def ineffective(self, g: Game, use: UseCard, t: int) -> str:
        if use.tflags[use.targets.index(t) if use.targets else 0] & IGNORE_ARMOR:
            return ""
        armor = armor_name(g, t)
        if armor == "仁王盾" and use.vc.color == "black":
            return "仁王盾"
        if armor == "藤甲" and use.vc.name == "杀":
            return "藤甲"
        return ""

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        push(g, SlashEffect(use=use_idx, target=t))


@register_card
class FireSlash(Slash):
    """火杀: a 杀 that deals fire damage."""

    name = "火杀"


@register_card
class ThunderSlash(Slash):
    """雷杀: a 杀 that deals thunder damage."""

    name = "雷杀"


class SlashEffect(Frame, tag="slash_effect"):
    """The effect of one 杀 on one target: 闪 (one or two), dodged triggers, damage."""

    use: int
    target: int
    got: int = 0
    forced: bool = False


@handler(SlashEffect)
def _slash_effect(g: Game, f: SlashEffect) -> None:
    use: UseCard = g.stack[f.use]
    flags = use.tflags[(use.targets or []).index(f.target)]
    if f.pc == 0:
        if flags & NO_DODGE:
            f.pc = 3
            return
        f.pc = 1
        push(
            g,
            AskCard(
                user=f.target,
                need="闪",
                source=use.user,
                reason=use.vc.name,
                ignore_armor=bool(flags & IGNORE_ARMOR),
            ),
        )
        return
    if f.pc == 1:
        if g.ret is None:
            f.pc = 3
            return
        f.got += dodge_halves(use.vc, g.ret)
        if f.got < 2 * (2 if flags & TWO_DODGE else 1):
            push(
                g,
                AskCard(
                    user=f.target,
                    need="闪",
                    source=use.user,
                    reason=use.vc.name,
                    ignore_armor=bool(flags & IGNORE_ARMOR),
                ),
            )
            return
        f.pc = 2
        emit(g, Dodged(target=f.target, name=use.vc.name))
        fire(g, "slash_dodged", len(g.stack) - 1, seats=[use.user])
        return
    if f.pc == 2:
        if not f.forced:
            pop(g)
            return
        f.pc = 3
    if f.pc == 3:
        f.pc = 4
        damage(
            g,
            use.user,
            f.target,
            1 + use.extra,
            nature_of(use.vc.name),
            use.vc.name,
            use.vc.cards,
            slash=True,
            ignore_armor=bool(flags & IGNORE_ARMOR),
        )
        return
    pop(g)


def dodge_halves(slash: VCard, dodge: VCard) -> int:
    """What one 闪 cancels, in halves of a 杀: a 强化 杀 (seed 002 谋攻, tag ``slash``) takes two
    ordinary 闪 or one 强化 闪 (tag ``dodge``)."""
    return 1 if "slash" in slash.tags and "dodge" not in dodge.tags else 2


@register_card
class Dodge(CardSpec):
    """闪: only in response — cancels a 杀 targeting you, or answers 万箭齐发."""

    name = "闪"

    def can_use(self, g: Game, user: int, vc: VCard) -> bool:
        return False


@register_card
class Peach(CardSpec):
    """桃: in your play phase, if wounded, recover 1; or save a dying character."""

    name = "桃"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        p = g.players[user]
        return [user] if p.hp < p.max_hp or ruleset_of(g).peach_at_full_hp(g, user) else []

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        use: UseCard = g.stack[use_idx]
        ruleset_of(g).peach_recover(g, use.user, t, use.vc)


@register_card
class Wine(CardSpec):
    """酒: once per turn your next 杀 this turn deals +1 damage; or save yourself while dying."""

    name = "酒"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        return [] if g.players[user].marks.get("t:wine_used", 0) else [user]

    def on_declare(self, g: Game, use: UseCard) -> None:
        g.players[use.user].marks["t:wine_used"] = 1

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.players[t].marks["t:wine"] = 1
