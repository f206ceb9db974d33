"""Delayed tricks (§2.3): placed in a judgement area, resolved in its owner's judgement phase."""

from __future__ import annotations

from typing import Any

from ..core.damage import damage
from ..core.delayed import DelayedResolve, DelayedSpec, judge_names
from ..core.flow import skip_phase
from ..core.judge import JUDGE_RULES
from ..core.query import distance_ok, next_alive, prohibited
from ..core.refusal import target_refusal, too_far
from ..core.state import Game
from ..core.use import register_card
from ..core.vcard import VCard
from ..core.zones import move

JUDGE_RULES["乐不思蜀"] = lambda c: c.suit != "H"  # the judged effect happens


@register_card
class Indulgence(DelayedSpec):
    """乐不思蜀: judge; not ♥ → skip this turn's play phase."""

    name = "乐不思蜀"
    stance = "hostile"

    def hit(self, g: Game, seat: int) -> None:
        skip_phase(g, seat, "play")


JUDGE_RULES["兵粮寸断"] = lambda c: c.suit != "C"  # the judged effect happens


@register_card
class SupplyShortage(DelayedSpec):
    """兵粮寸断 (distance ≤ 1): judge; not ♣ → skip this turn's draw phase."""

    name = "兵粮寸断"
    stance = "hostile"

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, Any]) -> bool:
        return super().target_ok(g, user, vc, t, data) and distance_ok(g, user, t, self.name)

    def refuse_target(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, Any]) -> str:
        return (
            target_refusal(g, user, t, vc.name)
            or too_far(g, user, t, vc.name)
            or super().refuse_target(g, user, vc, t, data)
        )

    def hit(self, g: Game, seat: int) -> None:
        skip_phase(g, seat, "draw")


JUDGE_RULES["闪电"] = lambda c: c.suit == "S" and 2 <= c.rank <= 9  # the judged effect happens


@register_card
class Lightning(DelayedSpec):
    """闪电 (on yourself): judge; ♠2–9 → 3 thunder damage with no source; else it moves on."""

    name = "闪电"
    stance = "harmful"

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        return [] if self.name in judge_names(g, user) else [user]

    def refuse_use(self, g: Game, user: int, vc: VCard) -> str:
        return f"seat {user} already has a {self.name} in its judgement area"

    def on_nullified(self, g: Game, f: DelayedResolve) -> None:
        pass_on(g, f.card, f.seat)

    def on_judged(self, g: Game, f: DelayedResolve, hit: bool) -> None:
        if hit:
            move(g, [f.card], "processing", "discard", reason=self.name)
            damage(g, -1, f.seat, 3, "thunder", card="闪电")
        else:
            pass_on(g, f.card, f.seat)


def pass_on(g: Game, cid: int, owner: int, src: str = "processing") -> None:
    """Move 闪电 to the next alive seat that can hold it; back to ``owner`` if none can."""
    s = owner
    for _ in range(len(g.players)):
        s = next_alive(g, s)
        if s == owner:
            break
        if "闪电" not in judge_names(g, s) and not prohibited(g, s, s, "闪电"):
            break
    dest = s if g.players[s].alive else owner
    if not g.players[dest].alive:
        move(g, [cid], src, "discard", reason="闪电")
        return
    move(g, [cid], src, "judge", owner if src == "judge" else -1, dest, reason="闪电")
    if g.cards[cid].name != "闪电":
        g.as_name[cid] = "闪电"
