"""拼点 (point contest), referenced by 白鸽 and never defined by seed 003 (U-003-11): the standard
contest — both show one hand card, the initiator wins iff his rank is strictly higher, both cards
go to the discard pile. No general of this ruleset starts one yet; skills push ``Pindian``.
"""

from __future__ import annotations

from ...core.engine import answer, ask, emit, handler, pop
from ...core.events import CardShown
from ...core.query import prohibited
from ...core.state import Frame, Game
from ...core.zones import move


def can_pindian(g: Game, initiator: int, target: int) -> bool:
    """Whether ``initiator`` may start a 拼点 with ``target`` (白鸽 forbids an opponent's)."""
    a, b = g.players[initiator], g.players[target]
    return (
        initiator != target
        and a.alive
        and b.alive
        and bool(a.hand)
        and bool(b.hand)
        and not prohibited(g, target, initiator, "拼点")
    )


class Pindian(Frame, tag="chengtian_pindian"):
    """Both seats pick a hand card (the initiator first, unseen by the other), then both are
    shown; pops True iff the initiator's rank is strictly higher."""

    initiator: int
    target: int
    reason: str = ""
    mine: int = -1
    theirs: int = -1


@handler(Pindian)
def _pindian(g: Game, f: Pindian) -> None:
    if f.pc == 0:
        if not can_pindian(g, f.initiator, f.target):
            pop(g, False)
            return
        f.pc = 1
        ask(
            g,
            f.initiator,
            "choose",
            [f"card:{c}" for c in g.players[f.initiator].hand],
            declinable=False,
            info={"about": "拼点", "reason": f.reason},
        )
        return
    if f.pc == 1:
        f.mine = int(answer(g)[0][5:])
        f.pc = 2
        ask(
            g,
            f.target,
            "choose",
            [f"card:{c}" for c in g.players[f.target].hand],
            declinable=False,
            info={"about": "拼点", "reason": f.reason},
        )
        return
    f.theirs = int(answer(g)[0][5:])
    emit(g, CardShown(seat=f.initiator, card=f.mine))
    emit(g, CardShown(seat=f.target, card=f.theirs))
    move(g, [f.mine], "hand", "discard", f.initiator, reason="拼点")
    move(g, [f.theirs], "hand", "discard", f.target, reason="拼点")
    pop(g, g.cards[f.mine].rank > g.cards[f.theirs].rank)
