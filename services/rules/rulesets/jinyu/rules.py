"""Seed 002 base rules that act inside the game: 闪电 moving on when its holder dies (A-002-05)
and the loyalist-kill penalty in the order of A-002-13."""

from __future__ import annotations

from ...cards.delayed import pass_on
from ...core.damage import Death, lose_hp
from ...core.engine import pop, push
from ...core.skills import Skill, register
from ...core.state import Frame, Game
from ...core.triggers import Trigger, ctx_frame
from ...core.zones import discard_areas
from .counters import reveal_role, set_counter

RULE_SKILL = "金鱼"


@register
class JinYuRules(Skill):
    """金鱼 (rule, not a general's skill): 武将出局后……弃置该武将所有牌及判定区里的牌（除了闪电，
    闪电置入下一名角色的判定区）。"""

    name = RULE_SKILL
    events = ("death",)
    asks_itself = True  # a rule: runs silently, asks nothing

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        # the dead seat is not offered triggers: the first living seat moves its 闪电
        d = ctx_frame(g, trig)
        if not isinstance(d, Death) or not g.options.get("lightning_passes_on_death", True):
            return False
        return any(g.as_name.get(c, g.cards[c].name) == "闪电" for c in g.players[d.seat].judge)

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        dead = ctx_frame(g, trig).seat
        for c in list(g.players[dead].judge):
            if g.as_name.get(c, g.cards[c].name) == "闪电":
                pass_on(g, c, dead, src="judge")


def loyalist_penalty(g: Game, killer: int) -> None:
    """任何人错杀了忠臣: discard hand and equipment → lose all 玉佩 and 护甲 → (not the lord) reveal
    the role → lose 1 HP (A-002-13: the reveal first, so a death from the HP loss cannot hide it)."""
    push(g, LoyalistPenalty(killer=killer))


class LoyalistPenalty(Frame, tag="loyalist_penalty"):
    """The penalty in two steps: what losing the cards fires (连营, 枭姬) runs before the rest."""

    killer: int

    def start(self, g: Game) -> None:
        self.then(self.discarded)
        discard_areas(g, self.killer, reason="penalty", judge=False)

    def discarded(self, g: Game) -> None:
        killer, k = self.killer, g.players[self.killer]
        pop(g)
        set_counter(g, killer, "jade", 0)
        set_counter(g, killer, "armor", 0)
        if k.role != "lord":
            reveal_role(g, killer)
            lose_hp(g, killer, 1)
