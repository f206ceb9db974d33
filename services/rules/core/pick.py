"""Picking one card from a seat's areas (过河拆桥, 顺手牵羊, 反馈, 寒冰剑 …).

Hand cards are picked blindly (``hand`` picks one at random); equipment and judgement cards face up.
"""

from __future__ import annotations

from .engine import answer, ask, pop, rand_below
from .keys import CardPick, card_keys, card_of, read
from .registry import ruleset_of
from .state import Decision, Frame, Game


class PickCard(Frame, tag="pick_card"):
    """``chooser`` picks one card of ``owner``; pops with the card id (or -1)."""

    chooser: int
    owner: int
    hand: bool = True
    equip: bool = True
    judge: bool = False
    reason: str = ""

    def start(self, g: Game) -> None:
        opts = pick_options(g, self.owner, self.hand, self.equip, self.judge, self.chooser)
        if not opts:
            pop(g, -1)
            return
        self.step = "picked"
        ask(
            g,
            self.chooser,
            "pick_card",
            opts,
            declinable=False,
            info={
                "owner": self.owner,
                "reason": self.reason,
                "hand_count": len(g.players[self.owner].hand),
            },
        )

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        choice = read(pick)
        if not isinstance(choice, CardPick):
            return ""
        cid, p = choice.id, g.players[self.owner]
        if cid in p.equip.values() and ruleset_of(g).equip_protected(
            g, self.owner, self.chooser, cid
        ):
            return f"seat {self.owner}'s equipment is protected from seat {self.chooser} by a rule of {g.ruleset}"
        if cid in p.judge and not self.judge:
            return f"{self.reason or 'this'} takes no card from the judgement area"
        if cid in p.hand:
            return "a hand card is picked blindly: pick `hand`"
        return f"that card is not in seat {self.owner}'s areas"

    def picked(self, g: Game) -> None:
        picks = answer(g)
        p = g.players[self.owner]
        if not picks:  # pragma: no cover - forced decision
            pop(g, -1)
            return
        if picks[0] == "hand":
            pop(g, p.hand[rand_below(g, len(p.hand))] if p.hand else -1)
        else:
            pop(g, card_of(picks[0]))


def pick_options(
    g: Game, owner: int, hand: bool, equip: bool, judge: bool, chooser: int = -1
) -> list[str]:
    """The option keys for picking a card of ``owner`` (equipment the ruleset protects from
    ``chooser`` (``Ruleset.equip_protected``) is left out)."""
    p = g.players[owner]
    out = ["hand"] if hand and p.hand else []
    if equip:
        rs = ruleset_of(g)
        out += card_keys(
            c
            for c in p.equip.values()
            if chooser < 0 or not rs.equip_protected(g, owner, chooser, c)
        )
    if judge:
        out += card_keys(p.judge)
    return out
