"""Timing points: ``fire`` pushes a Trigger frame that offers each listening skill in turn order.

Simultaneous triggers resolve in turn order starting from the current-turn seat (REFERENCE §1.15);
a seat's own skills in the order it holds them. Each skill triggers at most once per point.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .engine import answer, ask, pop
from .events import SkillInvoked
from .index import heard, listening, seat_entry, seat_skills
from .query import turn_order
from .skills import LISTENERS, SKILLS
from .state import Frame, Game


class Trigger(Frame, tag="trigger"):
    """Offer the skills listening at ``point``; ``ctx`` is the stack index of the frame they read."""

    point: str
    ctx: int = -1
    data: dict[str, Any] = msgspec.field(default_factory=dict)
    seats: list[int] = msgspec.field(default_factory=list)
    i: int = 0
    done: list[str] = msgspec.field(default_factory=list)
    cand: str = ""

    def start(self, g: Game) -> None:
        """Offer the next skill that applies, seat by seat; pop when none is left."""
        names = LISTENERS[self.point]
        holders = listening(g, self.point)  # the other seats hold no skill listening here
        players, seats, dead_too = g.players, self.seats, self.point == "death"
        while self.i < len(seats):
            seat = seats[self.i]
            if seat in holders and (dead_too or players[seat].alive):
                for name in seat_skills(g, seat):
                    if name in names and name not in self.done:
                        sk = SKILLS[name]
                        if not sk.can(g, seat, self):
                            continue
                        if sk.asks_itself:
                            self.done.append(name)
                            sk.run(g, seat, self)
                        elif sk.is_optional(g, seat, self):
                            self.cand = name
                            self.step = "confirmed"
                            ask(
                                g,
                                seat,
                                "confirm",
                                ["yes"],
                                info={"skill": name, "point": self.point},
                            )
                        else:
                            self.done.append(name)
                            g.out.append(SkillInvoked(seat=seat, skill=name))
                            sk.run(g, seat, self)
                        return
            self.i += 1
            if self.done:
                self.done = []
        pop(g)

    def offers(self, g: Game) -> bool:
        """Whether :meth:`start` would offer a skill now (one whose ``can`` holds), asked before
        the Trigger is pushed; nothing runs."""
        names = LISTENERS[self.point]
        holders = listening(g, self.point)
        players, dead_too = g.players, self.point == "death"
        try:
            for i, seat in enumerate(self.seats):
                if seat in holders and (dead_too or players[seat].alive):
                    self.i = i  # as start has it when it asks
                    # the seat's skills (index.seat_skills, without the call)
                    idx = g.skill_index
                    entry = idx.seats[seat] if idx is not None else None
                    for name in (entry or seat_entry(g, seat)).names:
                        if name in names and SKILLS[name].can(g, seat, self):
                            return True
            return False
        finally:
            self.i = 0

    def confirmed(self, g: Game) -> None:
        """The owner said whether to use the optional skill ``cand``."""
        self.step = "start"
        picked = answer(g)
        name = self.cand
        self.done.append(name)
        if picked:
            g.out.append(SkillInvoked(seat=self.seats[self.i], skill=name))
            SKILLS[name].run(g, self.seats[self.i], self)


def listens(g: Game, point: str, seats: list[int] | None = None) -> bool:
    """Whether a seat of ``seats`` (default: every seat) holds a skill listening at ``point``,
    alive (or dead, at ``death``): what makes :func:`fire` push a Trigger."""
    idx = g.skill_index  # the points some seat listens at (core/index.py): rarely this one
    points = idx.heard if idx is not None else None
    if point not in (heard(g) if points is None else points):
        return False
    # the seats listening there, kept by the index (index.listening, without the call)
    holders = idx.points.get(point) if idx is not None and points is not None else None
    if holders is None:
        holders = listening(g, point)
    if not holders:
        return False
    players = g.players
    dead_too = point == "death"
    for s in holders if seats is None else seats:
        if (dead_too or players[s].alive) and (seats is None or s in holders):
            return True
    return False


def fire(
    g: Game,
    point: str,
    ctx: int = -1,
    data: dict[str, Any] | None = None,
    seats: list[int] | None = None,
    last: bool = False,
) -> bool:
    """Push a Trigger for ``point`` if any seat holds a skill listening there; True if pushed.

    ``last``: the calling step does nothing after this but return (or, given False, carry on at
    once), so the Trigger would run next in the state as it is now. Then it is pushed only if
    some skill can trigger (what the Trigger's first step looks for): most listening skills
    cannot (their conditions fail), and a Trigger offering nothing changes nothing."""
    idx = g.skill_index
    if idx is not None and idx.heard is not None and point not in idx.heard:
        return False  # the usual case, answered here without a call
    if not listens(g, point, seats):
        return False
    order = seats if seats is not None else turn_order(g, g.current)
    trig = Trigger(point=point, ctx=ctx, data=data or {}, seats=list(order))
    if last and not trig.offers(g):
        return False
    g.stack.append(trig)
    return True


def ctx_frame(g: Game, trig: Trigger) -> Any:
    """The frame a trigger's skills read (the one that fired it)."""
    return g.stack[trig.ctx]
