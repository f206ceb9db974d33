"""拼点 (point contest), referenced by 白鸽 and never defined by seed 003 (U-003-11): the standard
contest — both show one hand card, the initiator wins iff his rank is strictly higher, both cards
go to the discard pile. No general of this ruleset starts one yet; skills push ``Pindian``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.engine import answer, ask_choice, emit, pop
from ...core.events import CardShown
from ...core.keys import card_keys, card_of
from ...core.query import prohibited
from ...core.state import Frame, Game
from ...core.zones import move

if TYPE_CHECKING:
    from ...core.redeal import Redeal


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

    def start(self, g: Game) -> None:
        if not can_pindian(g, self.initiator, self.target):
            pop(g, False)
            return
        self.then(self.initiator_picked)
        self.pick(g, self.initiator)

    def pick(self, g: Game, seat: int) -> None:
        """``seat`` picks its card, unseen by the other."""
        hand = g.players[seat].hand
        ask_choice(g, seat, card_keys(hand), about="拼点", reason=self.reason)

    def redeal(self, g: Game, rd: Redeal) -> None:
        """The initiator's card, picked unseen: for anyone else, a card dealt into its hand
        again."""
        if rd.seat != self.initiator and self.mine >= 0:
            self.mine = rd.card(g, self.mine)

    def initiator_picked(self, g: Game) -> None:
        self.mine = card_of(answer(g)[0])
        self.then(self.target_picked)
        self.pick(g, self.target)

    def target_picked(self, g: Game) -> None:
        """Both cards are shown and discarded; the higher rank (strictly) wins for the initiator."""
        self.theirs = card_of(answer(g)[0])
        emit(g, CardShown(seat=self.initiator, card=self.mine))
        emit(g, CardShown(seat=self.target, card=self.theirs))
        move(g, [self.mine], "hand", "discard", self.initiator, reason="拼点")
        move(g, [self.theirs], "hand", "discard", self.target, reason="拼点")
        pop(g, g.cards[self.mine].rank > g.cards[self.theirs].rank)
