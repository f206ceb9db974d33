"""Picking one card from a seat's areas (过河拆桥, 顺手牵羊, 反馈, 寒冰剑 …).

Hand cards are picked blindly (``hand`` picks one at random); equipment and judgement cards face up.
"""

from __future__ import annotations

from .engine import answer, ask, handler, pop, rand_below
from .state import Frame, Game


class PickCard(Frame, tag="pick_card"):
    """``chooser`` picks one card of ``owner``; pops with the card id (or -1)."""

    chooser: int
    owner: int
    hand: bool = True
    equip: bool = True
    judge: bool = False
    reason: str = ""


def pick_options(
    g: Game, owner: int, hand: bool, equip: bool, judge: bool, chooser: int = -1
) -> list[str]:
    """The option keys for picking a card of ``owner`` (equipment the ruleset protects from
    ``chooser`` — seed 003 白鸽 — is left out)."""
    from .ruleset import ruleset_of

    p = g.players[owner]
    out = ["hand"] if hand and p.hand else []
    if equip:
        rs = ruleset_of(g)
        out += [
            f"card:{c}"
            for c in p.equip.values()
            if chooser < 0 or not rs.equip_protected(g, owner, chooser, c)
        ]
    if judge:
        out += [f"card:{c}" for c in p.judge]
    return out


@handler(PickCard)
def _pick(g: Game, f: PickCard) -> None:
    if f.pc == 0:
        f.pc = 1
        opts = pick_options(g, f.owner, f.hand, f.equip, f.judge, f.chooser)
        if not opts:
            pop(g, -1)
            return
        ask(
            g,
            f.chooser,
            "pick_card",
            opts,
            declinable=False,
            info={"owner": f.owner, "reason": f.reason, "hand_count": len(g.players[f.owner].hand)},
        )
        return
    picks = answer(g)
    p = g.players[f.owner]
    if not picks:  # pragma: no cover - forced decision
        pop(g, -1)
        return
    if picks[0] == "hand":
        pop(g, p.hand[rand_below(g, len(p.hand))] if p.hand else -1)
    else:
        pop(g, int(picks[0][5:]))
