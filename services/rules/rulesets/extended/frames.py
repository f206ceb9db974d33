"""Procedures of the identity skills: the ordered after-death resolution, 势颓's choice, 背水's
discard and 策立 with its 叛徒 conversion.

After a death the win check runs first (A-004-05, in ``check_winner``); then, if the game goes
on, :class:`IdentityDeath` offers the death-triggered identity skills in :data:`ORDER`: the
killer's (罪己, 逆储), the victim's (赏令, 势颓, 军溃, 背水, 守义), then the reveals in the seed's
lord-death order 继位 > 统义 > 策立 (advanced: 逆储 > 继位 > 统义 > 策立).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from ...core.damage import lose_hp, recover
from ...core.engine import answer, ask_choice, ask_confirm, ask_discard, emit, pop
from ...core.events import SkillInvoked
from ...core.index import skills_changed
from ...core.keys import cards_of
from ...core.query import order_from
from ...core.skills import SKILLS
from ...core.state import Frame, Game
from ...core.zones import discard_areas, discard_from, draw
from .base import IdentitySkill, extra_turn, grow, mark, reveal, state, used
from .camps import CAMP_OF, REBEL_CAMP, advanced, alive_in, ruler, seat_of

if TYPE_CHECKING:
    from ...core.redeal import Redeal

ORDER = ("罪己", "逆储", "赏令", "势颓", "军溃", "背水", "守义", "继位", "统义", "策立")


class IdentityDeath(Frame, tag="identity_death"):
    """The death-triggered identity skills after ``dead`` died, in :data:`ORDER`."""

    dead: int
    killer: int = -1
    i: int = 0

    def start(self, g: Game) -> None:
        """Resolve the next skill of :data:`ORDER` that applies."""
        while self.i < len(ORDER):
            name = ORDER[self.i]
            self.i += 1
            sk = SKILLS[name]
            assert isinstance(sk, IdentitySkill)
            for seat in _holders(g, self):
                p = g.players[seat]
                if (
                    name in state(p).identity
                    and (p.alive or seat == self.dead)
                    and sk.applies(g, seat, self.dead, self.killer)
                ):
                    invoke(g, seat, name, self.dead, self.killer)
                    return  # one holder per skill: only the victim or the killer can match twice
        pop(g)


def _holders(g: Game, f: IdentityDeath) -> list[int]:
    """The victim, the killer, then the alive seats in turn order: who may hold a skill."""
    out = [f.dead] + ([f.killer] if f.killer >= 0 else [])
    return out + [s for s in order_from(g, g.current) if s not in out]


def invoke(g: Game, seat: int, name: str, dead: int = -1, killer: int = -1) -> None:
    """Announce and resolve the identity skill ``name`` of ``seat``."""
    sk = SKILLS[name]
    assert isinstance(sk, IdentitySkill)
    emit(g, SkillInvoked(seat=seat, skill=name))
    sk.resolve(g, seat, dead, killer)


class ShiTui(Frame, tag="shitui"):
    """势颓: the killer draws 3 + X; then the ruler recovers 1 or draws 2."""

    dead: int
    killer: int = -1
    ruler: int = -1

    def start(self, g: Game) -> None:
        if self.killer >= 0 and g.players[self.killer].alive:
            draw(g, self.killer, 3 + len(alive_in(g, REBEL_CAMP)), reason="势颓")
        self.ruler = ruler(g)
        if self.ruler < 0:
            pop(g)
            return
        p = g.players[self.ruler]
        self.then(self.chosen)
        ask_choice(g, self.ruler, (["recover"] if p.hp < p.max_hp else []) + ["draw"], "势颓")

    def chosen(self, g: Game) -> None:
        pick = answer(g)[0]
        pop(g)
        if pick == "recover":
            recover(g, self.ruler, 1)
        else:
            draw(g, self.ruler, 2, reason="势颓")


class BeiShui(Frame, tag="beishui"):
    """背水: ``seat`` (the killer) discards three of its cards (all if fewer), its choice."""

    seat: int

    def start(self, g: Game) -> None:
        p = g.players[self.seat]
        self.then(self.discarded)
        ask_discard(g, self.seat, list(p.hand) + list(p.equip.values()), 3, reason="背水")

    def discarded(self, g: Game) -> None:
        picks = cards_of(answer(g))
        pop(g)
        if picks:
            discard_from(g, self.seat, picks, reason="背水")


class CeLi(Frame, tag="celi"):
    """策立 of ``seat`` (``dying``: triggered by entering dying); advanced adds the 叛徒 offer."""

    seat: int
    dying: bool = False
    order: list[int] = msgspec.field(default_factory=list)
    i: int = 0
    lost: list[int] = msgspec.field(default_factory=list)

    def start(self, g: Game) -> None:
        """Reveal (out of dying, up to 1 HP); a dying reveal also awakens the 贼首's 统义."""
        p = g.players[self.seat]
        self.then(self.grown)
        mark(g, self.seat, "策立")
        reveal(g, self.seat)
        if self.dying and p.hp < 1:
            recover(g, self.seat, 1 - p.hp)
        chief = seat_of(g, "zeishou")
        if (
            advanced(g)
            and self.dying
            and chief >= 0
            and "统义" in state(g.players[chief]).identity
            and not used(g, chief, "统义")
        ):
            invoke(g, chief, "统义")  # "或内奸因濒死而发动“策立”明置身份牌时"

    def grown(self, g: Game) -> None:
        """+1 max HP, recover, draw three; beginner: an extra turn; advanced: 叛徒 offers."""
        adv = advanced(g)
        grow(g, self.seat, 3, lord_skill=adv)
        if not adv:
            extra_turn(g, self.seat)
            pop(g)
            return
        self.order = _candidates(g, self.seat)
        self.goto(g, self.offer_pantu)

    def offer_pantu(self, g: Game) -> None:
        """Each candidate in turn may become the 叛徒; if none does, the 内奸 chooses."""
        if self.i > 0 and answer(g):
            pop(g)
            convert(g, self.order[self.i - 1])
            return
        while self.i < len(self.order) and not g.players[self.order[self.i]].alive:
            self.i += 1
        if self.i < len(self.order):
            s = self.order[self.i]
            self.i += 1
            ask_confirm(g, s, "策立", about="pantu")
            return
        self.then(self.chosen)
        ask_choice(g, self.seat, ["extra_turn", "lose_hp"], about="策立")

    def redeal(self, g: Game, rd: Redeal) -> None:
        """The candidates are chosen by role (never the 贼首, whose role may be hidden): chosen
        again by the roles dealt. The seat being offered (its role is its own, so it is a
        candidate still) keeps its turn, the seats before it in the new order having declined;
        once every candidate has been offered, all of the new ones have."""
        if not self.order:
            return
        order = _candidates(g, self.seat)
        asked = self.order[self.i - 1] if self.step == "offer_pantu" and self.i > 0 else -1
        self.i = order.index(asked) + 1 if asked in order else len(order)
        self.order = order

    def chosen(self, g: Game) -> None:
        if answer(g)[0] == "extra_turn":
            extra_turn(g, self.seat)
            pop(g)
            return
        self.lost = order_from(g, self.seat, include_start=False)
        self.goto(g, self.each_loses_hp)

    def each_loses_hp(self, g: Game) -> None:
        """One at a time, each dying resolved before the next loses."""
        while self.lost:
            s = self.lost.pop(0)
            if g.players[s].alive:
                lose_hp(g, s, 1)
                return
        pop(g)


def _candidates(g: Game, seat: int) -> list[int]:
    """Who is offered 叛徒: every other alive seat from ``seat``'s next, except the lord, the
    贼首 and a 储君 who used 继位 (A-004-09)."""
    out = []
    for s in order_from(g, seat, include_start=False):
        p = g.players[s]
        if p.role in ("lord", "zeishou") or (p.role == "chujun" and used(g, s, "继位")):
            continue
        out.append(s)
    return out


def convert(g: Game, seat: int) -> None:
    """The seat's role card becomes 叛徒: old role and its identity skills go; 纳赂 runs."""
    p = g.players[seat]
    p.role = "pantu"
    state(p).identity = ["纳赂", "仇叛"]
    skills_changed(g, seat)
    invoke(g, seat, "纳赂")


def is_bandit_death(g: Game, dead: int) -> bool:
    """Whether ``dead`` was a rebel-camp member other than the chief."""
    return CAMP_OF.get(g.players[dead].role) == REBEL_CAMP and g.players[dead].role != "zeishou"


def discard_everything(g: Game, seat: int) -> None:
    """弃置所有牌 under the game's A-004-06 option."""
    # A-004-06: hand and equipment, the judgement area only with this option
    discard_areas(g, seat, reason="identity", judge=bool(g.options.get("all_cards_include_judge")))
