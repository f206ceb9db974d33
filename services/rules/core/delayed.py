"""Delayed tricks (§2.3): what every one does — placed in a judgement area, resolved in its
owner's judgement phase (无懈可击, then the judgement) — and the judgement phase itself. The cards
(乐不思蜀, 兵粮寸断, 闪电 …) are ``DelayedSpec`` subclasses in ``cards/delayed.py``."""

from __future__ import annotations

from typing import Any

import msgspec

from .engine import pop
from .events import Nullified
from .judge import Judge
from .refusal import target_refusal
from .state import Frame, Game
from .use import CardSpec, NullifyWindow, UseCard, may_nullify, specs_of
from .vcard import VCard
from .zones import move


def judge_names(g: Game, seat: int) -> list[str]:
    """The tricks in ``seat``'s judgement area (by what they act as)."""
    return [g.as_name.get(c, g.cards[c].name) for c in g.players[seat].judge]


class DelayedSpec(CardSpec):
    """A delayed trick: using it places it; its owner's judgement phase resolves it."""

    kind = "delayed"

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, Any]) -> bool:
        # an empty judgement area (the usual) holds no trick of this name: no list made
        return t != user and (not g.players[t].judge or self.name not in judge_names(g, t))

    def refuse_target(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, Any]) -> str:
        why = target_refusal(g, user, t, vc.name)
        if not why and self.name in judge_names(g, t):
            why = f"seat {t} already has a {self.name} in its judgement area"
        return why or super().refuse_target(g, user, vc, t, data)

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        use: UseCard = g.stack[use_idx]
        place(g, use.vc, t)

    def on_nullified(self, g: Game, f: DelayedResolve) -> None:
        """Nullified in the judgement phase: discarded (闪电 moves on instead)."""
        move(g, [f.card], "processing", "discard", reason=self.name)

    def on_judged(self, g: Game, f: DelayedResolve, hit: bool) -> None:
        """Apply the judgement: ``hit`` means the trick's effect happens."""
        move(g, [f.card], "processing", "discard", reason=self.name)
        if hit:
            self.hit(g, f.seat)

    def hit(self, g: Game, seat: int) -> None:
        """The effect on the owner."""


def place(g: Game, vc: VCard, t: int) -> None:
    """Put a used delayed trick (one physical card) into ``t``'s judgement area."""
    cid = vc.cards[0]
    move(g, [cid], "processing", "judge", -1, t, reason=vc.name)
    if g.cards[cid].name != vc.name:
        g.as_name[cid] = vc.name


class JudgePhase(Frame, tag="judge_phase"):
    """Resolve the delayed tricks in the judgement area, last placed first."""

    seat: int
    done: list[int] = msgspec.field(default_factory=list)

    def start(self, g: Game) -> None:
        p = g.players[self.seat]
        todo = [c for c in p.judge if c not in self.done] if p.alive else []
        if not todo:
            pop(g)
            return
        cid = todo[-1]
        self.done.append(cid)
        g.stack.append(
            DelayedResolve(seat=self.seat, card=cid, name=g.as_name.get(cid, g.cards[cid].name))
        )


class DelayedResolve(Frame, tag="delayed"):
    """One delayed trick: 无懈可击 window, judgement, effect."""

    seat: int
    card: int
    name: str

    def spec(self, g: Game) -> DelayedSpec:
        """The delayed trick's spec (which defines its outcomes)."""
        spec = specs_of(g)[self.name]
        assert isinstance(spec, DelayedSpec)
        return spec

    def start(self, g: Game) -> None:
        self.step = "nullify_answered"
        move(g, [self.card], "judge", "processing", self.seat, reason="judge_phase")
        if g.stack[-1] is not self or may_nullify(g):  # (what the move fired runs after it)
            g.stack.append(NullifyWindow(name=self.name, target=self.seat))
            return
        g.ret = False  # a window nobody can answer: not nullified
        self.nullify_answered(g)

    def nullify_answered(self, g: Game) -> None:
        spec = self.spec(g)
        if g.ret:
            g.out.append(Nullified(target=self.seat, name=self.name))
            spec.on_nullified(g, self)
            pop(g)
            return
        self.step = "judged"
        g.stack.append(Judge(seat=self.seat, reason=self.name))

    def judged(self, g: Game) -> None:
        self.step = "done"
        self.spec(g).on_judged(g, self, bool(g.ret))

    def done(self, g: Game) -> None:
        pop(g)
