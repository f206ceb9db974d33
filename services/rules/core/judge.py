"""Judgement (§1.12): reveal, modification window (鬼才), result, after-effect window (天妒, 洛神)."""

from __future__ import annotations

from collections.abc import Callable

from .cards import CardDef
from .engine import pop
from .events import CardsMoved, Judged
from .query import order_from
from .state import Frame, Game
from .triggers import fire
from .zones import move, take_top

JUDGE_RULES: dict[str, Callable[[CardDef], bool]] = {}
"""The judgement's reason (a card or skill name) -> does the judged effect happen for this card?
Whatever judges registers its own rule beside its text (乐不思蜀 in cards/delayed.py, 八卦阵 in
cards/equipment.py, 刚烈 in skills/wei.py …): the core names no card."""


class Judge(Frame, tag="judge"):
    """Judge for ``seat`` because of ``reason``; pops with the result (True = effect happens)."""

    seat: int
    reason: str
    card: int = -1
    result: bool = False

    def start(self, g: Game) -> None:
        """Reveal the top card; it may be replaced (鬼才) before it takes effect."""
        self.step = "takes_effect"
        self.card = take_top(g, 1)[0]
        g.processing.append(self.card)
        g.out.append(
            CardsMoved(
                cards=[self.card],
                count=1,
                src="draw",
                dst="processing",
                dst_seat=self.seat,
                reason="judge",
            ),
        )
        fire(g, "judge_modify", g.top, seats=order_from(g, g.current), last=True)

    def takes_effect(self, g: Game) -> None:
        """The result, which a rule may still turn over (谋攻's 强化 delayed trick) before it is
        announced, so the ``judged`` event carries the result that happens."""
        self.step = "announced"
        self.result = JUDGE_RULES[self.reason](g.cards[self.card])
        fire(g, "judge_result", g.top, last=True)

    def announced(self, g: Game) -> None:
        """The result is announced; then the after-effect window (天妒, 洛神)."""
        self.step = "done"
        g.out.append(Judged(seat=self.seat, card=self.card, reason=self.reason, result=self.result))
        fire(g, "judge_done", g.top, last=True)

    def done(self, g: Game) -> None:
        if self.card in g.processing:
            move(g, [self.card], "processing", "discard", reason="judge")
        pop(g, self.result)
