"""The identity-skill base class and the small effects several identity skills share.

Identity skills are game rules (A-004-01): they sit in the seat's :class:`IdentityState`
(``Player.ext``), which no general skill reads or changes, and they are never copied, sealed or
removed by general skills. Most are
locked; the death-triggered ones are resolved by :mod:`.frames` in the seed's order rather than
at the ``death`` timing point, because the seed fixes their order across seats.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from ...core.damage import recover
from ...core.engine import emit
from ...core.events import MaxHpChanged, RoleAssigned
from ...core.flow import GameFrame
from ...core.index import skills_changed
from ...core.skills import Skill
from ...core.state import Game, Player, SeatExt
from ...core.zones import draw


class IdentityState(SeatExt, kw_only=True):
    """A seat's identity skills and whether it has gained its general's lord skills (获得主公技,
    from 继位, 统义 or 策立)."""

    identity: list[str] = msgspec.field(default_factory=list)
    lord_skills: bool = False

    def rule_skills(self) -> list[str]:
        return self.identity

    def has_lord_skills(self) -> bool:
        return self.lord_skills


def state(p: Player) -> IdentityState:
    """The identity state of seat ``p``."""
    ext = p.ext
    assert isinstance(ext, IdentityState)
    return ext


class IdentitySkill(Skill):
    """A seed 004 identity skill; ``applies``/``resolve`` are its after-death hooks."""

    optional: ClassVar[bool] = False
    identity: ClassVar[bool] = True

    def applies(self, g: Game, holder: int, dead: int, killer: int) -> bool:
        """Whether this skill of ``holder`` fires after ``dead`` died (killed by ``killer``)."""
        return False

    def resolve(self, g: Game, holder: int, dead: int, killer: int) -> None:
        """The after-death effect (may push frames)."""


def used(g: Game, seat: int, name: str) -> bool:
    """Whether ``seat`` has used the once-per-game identity skill ``name``."""
    return bool(g.players[seat].marks.get(f"id:{name}"))


def mark(g: Game, seat: int, name: str) -> None:
    """Record a once-per-game identity skill as used."""
    g.players[seat].marks[f"id:{name}"] = 1


def reveal(g: Game, seat: int) -> None:
    """明置身份牌: the role card turns face up (a public ``role_assigned``)."""
    p = g.players[seat]
    p.role_revealed = True
    emit(g, RoleAssigned(seat=seat, role=p.role))


def grow(g: Game, seat: int, cards: int, lord_skill: bool) -> None:
    """体力上限+1，回复1点体力, draw ``cards``, and (if ``lord_skill``) 获得主公技."""
    p = g.players[seat]
    p.max_hp += 1
    emit(g, MaxHpChanged(seat=seat, max_hp=p.max_hp, hp=p.hp))
    recover(g, seat, 1)
    if lord_skill:
        state(p).lord_skills = True
        skills_changed(g, seat)
    draw(g, seat, cards, reason="identity")


def extra_turn(g: Game, seat: int) -> None:
    """``seat`` takes an extra turn after the current one."""
    root = next(f for f in g.stack if isinstance(f, GameFrame))
    root.extra.append(seat)
