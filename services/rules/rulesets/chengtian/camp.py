"""The battlefield (战场) and the camp (军营) of seed 003: deploying, benching, falling, revealing,
and which skills a seat has (a face-down general has none; 乐不思蜀 seals its general's).

One general stands on each seat's battlefield (``Player.general`` with its HP and skills); the
others wait in its camp (:class:`CampState`, the seat's ``Player.ext``), top first. Marks kept on the seat (plain data, never expiring):
``face_down`` (1 while the battlefield general is 暗置), ``seal`` (id + 1 of the 乐不思蜀 that
seals it) and ``hp:NAME`` (the HP a benched general keeps, U-003-17).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from ...core.damage import Damage
from ...core.delayed import DelayedResolve
from ...core.engine import emit, pop
from ...core.events import MaxHpChanged
from ...core.flow import end_turn_now
from ...core.index import skills_changed
from ...core.registry import ruleset_of
from ...core.ruleset import General, announce_general
from ...core.skills import Skill, register
from ...core.state import Frame, Game, Player, SeatExt
from ...core.triggers import Trigger
from ...core.zones import discard_areas, move
from .events import GeneralBenched, GeneralDeployed, GeneralFell

if TYPE_CHECKING:
    from ...core.redeal import Fits, Redeal

REVEAL = "暗置"  # the system skill a face-down seat holds: it reveals at its owner's turn start


class CampState(SeatExt, kw_only=True):
    """A seat's camp (军营): the generals waiting behind the battlefield, top first."""

    camp: list[str] = msgspec.field(default_factory=list)


def camp_of(p: Player) -> list[str]:
    """Seat ``p``'s camp (the list itself), top first."""
    ext = p.ext
    assert isinstance(ext, CampState)
    return ext.camp


def general_of(g: Game, name: str) -> General:
    """The General called ``name`` in this game's ruleset."""
    return ruleset_of(g).generals()[name]


def seal_card(g: Game, seat: int) -> int:
    """The 乐不思蜀 sealing ``seat``'s battlefield general, or -1."""
    return g.players[seat].marks.get("seal", 0) - 1


def refresh_skills(g: Game, seat: int) -> None:
    """Recompute ``seat``'s skills from its battlefield general, its face and its seal."""
    p = g.players[seat]
    face_down = bool(p.marks.get("face_down"))
    own = [] if seal_card(g, seat) >= 0 else list(general_of(g, p.general).skills)
    if face_down and not g.options.get("face_down_skills", False):
        own = []
    p.skills = own + ([REVEAL] if face_down else [])
    skills_changed(g, seat)


def unseal(g: Game, seat: int) -> None:
    """The seal on ``seat`` ends (its 乐不思蜀 left, or its general did)."""
    if g.players[seat].marks.pop("seal", 0):
        refresh_skills(g, seat)


def being_judged(g: Game, cid: int) -> bool:
    """Whether the delayed trick ``cid`` is being resolved in a judgement phase right now."""
    return any(isinstance(fr, DelayedResolve) and fr.card == cid for fr in g.stack)


def check_seal(g: Game, seat: int) -> None:
    """After ``seat``'s judgement area changed: the seal lasts while its card lies there (or is
    being judged); taken or dismantled, it ends (U-003-16)."""
    if seat < 0:
        return
    cid = seal_card(g, seat)
    if cid >= 0 and cid not in g.players[seat].judge and not being_judged(g, cid):
        unseal(g, seat)


def discard_seal(g: Game, seat: int) -> None:
    """The sealed general left the battlefield: its 乐不思蜀 is discarded (U-003-16)."""
    cid = seal_card(g, seat)
    if cid >= 0 and cid in g.players[seat].judge:
        move(g, [cid], "judge", "discard", seat, reason="乐不思蜀")
    unseal(g, seat)


def deploy(g: Game, seat: int, face_down: bool) -> None:
    """上阵: the camp's top general takes the battlefield (with the HP it kept, U-003-17)."""
    p = g.players[seat]
    name = camp_of(p).pop(0)
    gen = general_of(g, name)
    kept = p.marks.pop(f"hp:{name}", 0)
    p.general, p.gender, p.faction = gen.name, gen.gender, gen.faction
    p.max_hp = gen.hp
    p.hp = kept if kept > 0 and g.options.get("benched_keeps_hp", True) else gen.hp
    if face_down:
        p.marks["face_down"] = 1
    else:
        p.marks.pop("face_down", None)
    refresh_skills(g, seat)
    emit(g, GeneralDeployed(seat=seat, face_down=face_down, camp=len(camp_of(p))))
    announce_general(g, seat, seen_by=[seat] if face_down else None)
    emit(g, MaxHpChanged(seat=seat, max_hp=p.max_hp, hp=p.hp))


def bench(g: Game, seat: int, keep_seal: bool = False) -> None:
    """走马换将: the battlefield general goes to the camp's bottom, keeping its HP; its 乐不思蜀
    is discarded (U-003-16), or with ``keep_seal`` stays and seals the general deployed next."""
    p = g.players[seat]
    if not keep_seal:
        discard_seal(g, seat)
    hidden = bool(p.marks.pop("face_down", 0))
    p.marks[f"hp:{p.general}"] = p.hp
    camp_of(p).append(p.general)
    emit(g, GeneralBenched(seat=seat, general="" if hidden else p.general))


def reveal(g: Game, seat: int) -> None:
    """A face-down general turns face up (U-003-17: at its owner's next turn start)."""
    p = g.players[seat]
    if not p.marks.pop("face_down", 0):
        return
    refresh_skills(g, seat)
    announce_general(g, seat)


def redeal_camps(g: Game, seat: int, rd: Redeal) -> None:
    """What only its owner knows, dealt again from the generals ``seat`` has not seen: every
    other seat's camp (a general benched face up included: the view keeps no camp) and its
    battlefield general while face down. A benched general's kept HP stays at its place in the
    camp, with a general of at least that HP where there is one; a face-down general is one of
    the HP its seat shows where there is one (``max_hp_changed`` made that public)."""
    for p in g.players:
        if p.seat == seat:
            continue
        camp = camp_of(p)
        kept = [p.marks.pop(f"hp:{name}", 0) for name in camp]  # before a name is dealt again
        for i, hp in enumerate(kept):
            camp[i] = rd.general(g, _at_least(hp))
            if hp:
                p.marks[f"hp:{camp[i]}"] = hp
        if p.marks.get("face_down"):
            gen = general_of(g, rd.general(g, _of_hp(p.max_hp)))
            p.general, p.gender, p.faction = gen.name, gen.gender, gen.faction
            refresh_skills(g, p.seat)


def _at_least(hp: int) -> Fits:
    return lambda x: x.hp >= hp


def _of_hp(hp: int) -> Fits:
    return lambda x: x.hp == hp


@register
class Reveal(Skill):
    """暗置 (system): a face-down general is revealed at the start of its owner's turn."""

    name = REVEAL
    events = ("turn_start",)
    optional = False

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        return g.current == seat and bool(g.players[seat].marks.get("face_down"))

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        reveal(g, seat)


class GeneralFall(Frame, tag="chengtian_fall"):
    """U-003-05: a general nobody saved leaves the game; the camp's top general is deployed."""

    seat: int
    killer: int = -1

    def start(self, g: Game) -> None:
        p = g.players[self.seat]
        name = p.general
        discard_seal(g, self.seat)
        p.marks.pop("face_down", None)
        emit(g, GeneralFell(seat=self.seat, general=name, killer=self.killer))
        # the fallen general takes no "after damage" triggers; its successor must not either
        for fr in g.stack:
            if isinstance(fr, Damage) and fr.target == self.seat and fr.after_hit():
                fr.target_replaced = True
        if g.options.get("fall_discards_cards", False):
            discard_areas(g, self.seat, reason="general_fell")
        deploy(g, self.seat, bool(g.options.get("fall_deploy_face_down", False)))
        pop(g)
        if self.seat == g.current and g.options.get("fall_ends_turn", True):
            end_turn_now(g)
