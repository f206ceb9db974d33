"""Judgement (§1.12): reveal, modification window (鬼才), result, after-effect window (天妒, 洛神)."""

from __future__ import annotations

from collections.abc import Callable

from .cards import CardDef, color_of
from .engine import emit, handler, pop
from .events import CardsMoved, Judged
from .query import order_from
from .state import Frame, Game
from .triggers import fire
from .zones import move, take_top

# reason -> does the judged effect happen for this card?
JUDGE_RULES: dict[str, Callable[[CardDef], bool]] = {
    "乐不思蜀": lambda c: c.suit != "H",
    "闪电": lambda c: c.suit == "S" and 2 <= c.rank <= 9,
    "兵粮寸断": lambda c: c.suit != "C",
    "八卦阵": lambda c: color_of(c.suit) == "red",
}


class Judge(Frame, tag="judge"):
    """Judge for ``seat`` because of ``reason``; pops with the result (True = effect happens)."""

    seat: int
    reason: str
    card: int = -1
    result: bool = False


@handler(Judge)
def _judge(g: Game, f: Judge) -> None:
    if f.pc == 0:
        f.pc = 1
        f.card = take_top(g, 1)[0]
        g.processing.append(f.card)
        emit(
            g,
            CardsMoved(
                cards=[f.card],
                count=1,
                src="draw",
                dst="processing",
                dst_seat=f.seat,
                reason="judge",
            ),
        )
        fire(g, "judge_modify", len(g.stack) - 1, seats=order_from(g, g.current))
        return
    if f.pc == 1:
        f.pc = 2
        f.result = JUDGE_RULES[f.reason](g.cards[f.card])
        emit(g, Judged(seat=f.seat, card=f.card, reason=f.reason, result=f.result))
        fire(g, "judge_done", len(g.stack) - 1)
        return
    if f.card in g.processing:
        move(g, [f.card], "processing", "discard", reason="judge")
    pop(g, f.result)
