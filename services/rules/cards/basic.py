"""Basic cards (§2.1): 杀 (and 火杀, 雷杀), 闪, 桃, 酒."""

from __future__ import annotations

from ..core.damage import damage
from ..core.engine import pop
from ..core.events import Dodged
from ..core.index import seat_entry
from ..core.options import EQUIP_SLASH_KEEPS_RANGE
from ..core.query import in_range, limit_lifted, reached, reaches, reaches_any, with_hook
from ..core.refusal import out_of_range, target_refusal
from ..core.registry import ruleset_of
from ..core.respond import AskCard, demand
from ..core.state import Frame, Game
from ..core.triggers import fire
from ..core.use import IGNORE_ARMOR, NO_DODGE, TWO_DODGE, CardSpec, UseCard, register_card
from ..core.vcard import VCard, nature_of

UNLIMITED = 1000


def slash_limit(g: Game, seat: int) -> int:
    """How many 杀 ``seat`` may use in its play phase (§1.6)."""
    idx = g.skill_index  # with_hook(g, seat, "slash_limit"), without the call
    entry = idx.seats[seat] if idx is not None else None
    hooks = (entry or seat_entry(g, seat)).hooks["slash_limit"]
    return 1 + sum(s.slash_limit(g, seat) for s in hooks) if hooks else 1


def own_equipment_used(g: Game, user: int, vc: VCard) -> int:
    """The card of ``user``'s own equipment area that ``vc`` is made of (武圣 with a red weapon
    or horse), or -1: A-STD-04 measures the 杀's range without it, unless the table's
    ``equip_slash_keeps_range`` counts it (only a one-card conversion takes equipment)."""
    eq = g.players[user].equip
    if not eq or not vc.cards or g.options.get(EQUIP_SLASH_KEEPS_RANGE, False):
        return -1
    worn = eq.values()
    return next((c for c in vc.cards if c in worn), -1)


@register_card
class Slash(CardSpec):
    """杀: one other character in attack range uses 闪 or takes 1 damage from you (a card of the
    user's own equipment used as the 杀 does not count for that range: A-STD-04)."""

    name = "杀"
    stance = "hostile"

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> bool:
        if t == user:
            return False
        if data.get("no_distance"):
            return True
        without = own_equipment_used(g, user, vc)
        if without >= 0:
            return in_range(g, user, t, without) or limit_lifted(g, user, t, vc.name)
        return reaches(g, user, t, vc.name)

    def legal_targets(self, g: Game, user: int, vc: VCard, data: dict[str, object]) -> list[int]:
        if type(self).target_ok is not Slash.target_ok or own_equipment_used(g, user, vc) >= 0:
            return super().legal_targets(g, user, vc, data)
        return reached(g, user, vc.name, limited=not data.get("no_distance"))

    def can_use(self, g: Game, user: int, vc: VCard) -> bool:
        if g.players[user].marks.get("t:slash", 0) >= slash_limit(g, user):
            return False
        if type(self).target_ok is not Slash.target_ok or own_equipment_used(g, user, vc) >= 0:
            return super().can_use(g, user, vc)
        return reaches_any(g, user, vc.name)  # the range once (play options)

    def refuse_target(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, object]) -> str:
        without = -1 if data.get("no_distance") else own_equipment_used(g, user, vc)
        return (
            target_refusal(g, user, t, vc.name)
            or out_of_range(g, user, t, vc.name, without)
            or super().refuse_target(g, user, vc, t, data)
        )

    def refuse_use(self, g: Game, user: int, vc: VCard) -> str:
        n, limit = g.players[user].marks.get("t:slash", 0), slash_limit(g, user)
        if n >= limit:
            return f"once per phase: {n} 杀 used in this play phase, the limit is {limit}"
        return super().refuse_use(g, user, vc)

    def target_range(self, g: Game, user: int, vc: VCard) -> tuple[int, int]:
        extra = sum(s.target_count(g, user, vc) for s in with_hook(g, user, "target_count"))
        return 1, 1 + extra

    def on_declare(self, g: Game, use: UseCard) -> None:
        p = g.players[use.user]
        if use.counted and g.phase == "play" and g.current == use.user:
            p.marks["t:slash"] = p.marks.get("t:slash", 0) + 1
        if p.marks.pop("t:wine", 0):
            use.extra += 1

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.stack.append(SlashEffect(use=use_idx, target=t))


@register_card
class FireSlash(Slash):
    """火杀: a 杀 that deals fire damage."""

    name = "火杀"


@register_card
class ThunderSlash(Slash):
    """雷杀: a 杀 that deals thunder damage."""

    name = "雷杀"


class SlashEffect(Frame, tag="slash_effect"):
    """One 杀 on one target: it uses 闪 (two against 无双), else it takes the damage; a dodged 杀
    still hits if a ``slash_dodged`` skill (贯石斧) sets ``forced``."""

    use: int
    target: int
    got: int = 0
    forced: bool = False

    def of(self, g: Game) -> tuple[UseCard, int]:
        """The use of the 杀 and this target's flags (NO_DODGE, TWO_DODGE, IGNORE_ARMOR)."""
        use: UseCard = g.stack[self.use]
        return use, use.tflags[(use.targets or []).index(self.target)]

    def start(self, g: Game) -> None:
        use, flags = self.of(g)
        if flags & NO_DODGE:
            self.goto(g, self.hit)
            return
        self.step = "dodge_answered"
        self.ask_dodge(g, use, flags)

    def ask_dodge(self, g: Game, use: UseCard, flags: int) -> None:
        """Demand a 闪 of the target (one with nothing to give answers at once)."""
        ask = AskCard(
            user=self.target,
            need="闪",
            source=use.user,
            reason=use.vc.name,
            ignore_armor=bool(flags & IGNORE_ARMOR),
        )
        if not demand(g, ask):
            self.dodge_answered(g)

    def dodge_answered(self, g: Game) -> None:
        use, flags = self.of(g)
        if g.ret is None:
            self.goto(g, self.hit)
            return
        self.got += dodge_halves(use.vc, g.ret)
        if self.got < 2 * (2 if flags & TWO_DODGE else 1):
            self.ask_dodge(g, use, flags)
            return
        self.step = "dodged"
        g.out.append(Dodged(target=self.target, name=use.vc.name))
        fire(g, "slash_dodged", g.top, seats=[use.user], last=True)

    def dodged(self, g: Game) -> None:
        if not self.forced:
            pop(g)
            return
        self.goto(g, self.hit)

    def hit(self, g: Game) -> None:
        use, flags = self.of(g)
        pop(g)
        damage(
            g,
            use.user,
            self.target,
            1 + use.extra,
            nature_of(use.vc.name),
            use.vc.name,
            use.vc.cards,
            slash=True,
            ignore_armor=bool(flags & IGNORE_ARMOR),
        )


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

    def refuse_use(self, g: Game, user: int, vc: VCard) -> str:
        return "闪 is used only in answer to a 杀 or a demand for 闪"


@register_card
class Peach(CardSpec):
    """桃: in your play phase, if wounded, recover 1; or save a dying character."""

    name = "桃"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        p = g.players[user]
        return [user] if p.hp < p.max_hp or ruleset_of(g).peach_at_full_hp(g, user) else []

    def refuse_use(self, g: Game, user: int, vc: VCard) -> str:
        p = g.players[user]
        if p.hp >= p.max_hp:
            return f"at full HP: a 桃 in the play phase heals only its wounded user ({p.hp}/{p.max_hp})"
        return super().refuse_use(g, user, vc)

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        use: UseCard = g.stack[use_idx]
        ruleset_of(g).peach_recover(g, use.user, t, use.vc)


@register_card
class Wine(CardSpec):
    """酒: once per turn your next 杀 this turn deals +1 damage; or save yourself while dying."""

    name = "酒"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        used = g.players[user].marks.get("t:wine_used", 0)
        return [] if used and not ruleset_of(g).wine_beyond_limit(g, user) else [user]

    def refuse_use(self, g: Game, user: int, vc: VCard) -> str:
        return "once per turn: a 酒 was used this turn"

    def on_declare(self, g: Game, use: UseCard) -> None:
        marks = g.players[use.user].marks
        marks["t:wine_used"] = marks.get("t:wine_used", 0) + 1  # how many count this turn

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        g.players[t].marks["t:wine"] = 1
