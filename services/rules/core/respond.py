"""Demanding a card: 闪 against 杀, 杀 in 决斗/南蛮入侵, 闪 for 万箭齐发, 桃 while dying, 无懈可击.

The seat is offered its matching hand cards and the skills that can provide one (八卦阵, 倾国,
护驾 …). A used or played card is announced and goes to the discard pile; the frame pops with the
virtual card, or ``None`` if the seat gave nothing.
"""

from __future__ import annotations

import msgspec

from .engine import answer, ask, pop
from .events import CardPlayed, CardUsed
from .keys import CardPick, SkillPick, card_key_table, parse, read, skill_key
from .query import with_hook
from .refusal import skill_refusal
from .skills import SKILLS
from .state import Decision, Frame, Game
from .triggers import fire
from .vcard import SLASHES, VCard, matches, physical
from .zones import move, zone_of


class AskCard(Frame, tag="ask_card"):
    """Ask ``user`` for one ``need`` card (``mode`` use or play)."""

    user: int
    need: str
    mode: str = "use"  # use, play, or select (the caller then uses it through the pipeline)
    target: int = -1  # whom it is for: 桃's dying seat, 无懈可击's trick target, 青龙's 杀's
    source: int = -1  # who demands it
    reason: str = ""
    tried: list[str] = msgspec.field(default_factory=list)
    vc: VCard | None = None
    trying: str = ""
    ignore_armor: bool = False  # 青釭剑: 八卦阵 cannot help

    def start(self, g: Game) -> None:
        if not g.players[self.user].alive:
            pop(g, None)
            return
        self.step = "answered"
        info = {
            "need": self.need,
            "mode": self.mode,
            "reason": self.reason,
            "source": self.source,
            "target": self.target,
        }
        ask(g, self.user, "respond", options_for(g, self), info=info)
        if g.pending is None:  # nothing to give: answered (declined) at once
            self.answered(g)

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        match read(pick):
            case SkillPick(name) if name in self.tried:
                return f"{name} was already tried for this demand"
            case SkillPick(name) if self.ignore_armor and getattr(SKILLS.get(name), "armor", False):
                return f"{name} does not help: this 杀 ignores armour"
            case SkillPick(name):
                return skill_refusal(g, self.user, name)
            case CardPick(cid) if cid not in g.players[self.user].hand:
                return f"seat {self.user} does not hold that card in its hand"
            case CardPick(cid) if g.cards[cid].name == "酒" and self.need == "桃":
                return "a 酒 saves only its dying user"
            case CardPick(cid) if not matches(self.need, g.cards[cid].name):
                return f"{g.cards[cid].name} does not answer the demand for {self.need}"
        if self.need == "闪" and g.turn_marks.get(f"no_dodge:{self.user}", 0):
            return f"seat {self.user} may not use 闪 now"
        return ""

    def answered(self, g: Game) -> None:
        if not g.players[self.user].alive:
            pop(g, None)
            return
        picks = answer(g)
        if not picks:
            pop(g, None)
            return
        match parse(picks[0]):
            case CardPick(cid):
                _finish(g, self, physical(g, cid))
            case SkillPick(name):
                self.trying = name
                self.step = "provided"
                SKILLS[name].provide(g, self.user, self)

    def provided(self, g: Game) -> None:
        """A providing skill finished: its card, or None (then the seat is asked again)."""
        if not g.players[self.user].alive:
            pop(g, None)
            return
        vc = g.ret
        if vc is None:
            self.tried.append(self.trying)
            self.step = "start"
            return
        _finish(g, self, vc)

    def announced(self, g: Game) -> None:
        """ "When used / played" (集智 for a 无懈可击, 克己's bookkeeping), after whatever the
        card's move fired (连营, 枭姬)."""
        self.step = "given"
        point = "card_using" if self.mode == "use" else "card_playing"
        if not fire(g, point, g.top, last=True):
            self.given(g)

    def given(self, g: Game) -> None:
        pop(g, self.vc)


def demand(g: Game, ask: AskCard) -> bool:
    """Push the demand ``ask``, unless its seat has nothing that answers it (no such card, no
    providing skill: most seats, most demands). Then it is answered "nothing" at once: False,
    and ``g.ret`` is None, as the frame would have handed back; the caller goes on in the same
    step."""
    if g.players[ask.user].alive and options_for(g, ask):
        g.stack.append(ask)
        return True
    g.ret = None
    return False


def hand_options(g: Game, f: AskCard) -> list[str]:
    """Hand cards of ``f.user`` that answer the demand."""
    p = g.players[f.user]
    cards = g.cards
    need = f.need
    self_wine = need == "桃" and f.target == f.user and f.mode == "use"
    any_slash = need == "杀"  # vcard.matches, without a call a card: any 杀 answers 杀
    keys = card_key_table(len(cards))
    out = []
    for cid in p.hand:
        name = cards[cid].name
        if name == need or (any_slash and name in SLASHES) or (self_wine and name == "酒"):
            out.append(keys[cid])
    return out


def options_for(g: Game, f: AskCard) -> list[str]:
    """Every legal option of the demand: hand cards and providing skills."""
    opts = hand_options(g, f)
    for s in with_hook(g, f.user, "provides"):
        if s.name not in f.tried and s.provides(g, f.user, f):
            opts.append(skill_key(s.name))
    if f.need == "闪" and g.turn_marks.get(f"no_dodge:{f.user}", 0):
        return []
    return opts


def announce(g: Game, f: AskCard, vc: VCard) -> None:
    """Emit the use/play of ``vc`` and put its physical cards into the discard pile."""
    if f.mode == "use":
        g.out.append(
            CardUsed(
                user=f.user,
                name=vc.name,
                suit=vc.suit,
                rank=vc.rank,
                cards=vc.cards,
                targets=[f.target] if f.target >= 0 else [],
                skill=vc.skill,
            ),
        )
    else:
        g.out.append(
            CardPlayed(
                seat=f.user,
                name=vc.name,
                suit=vc.suit,
                rank=vc.rank,
                cards=vc.cards,
                skill=vc.skill,
            ),
        )
    for cid in vc.cards:
        zone = zone_of(g, f.user, cid)
        if zone:
            move(g, [cid], zone, "discard", f.user, reason=f.mode)


def _finish(g: Game, f: AskCard, vc: VCard) -> None:
    """The seat gave ``vc``: announce it (its move may fire triggers, which run first), then
    the on-use / on-play timing point in the next step."""
    f.vc = vc
    if f.mode == "select":  # the caller uses the card itself (借刀杀人, 青龙偃月刀)
        f.then(f.given)
        return
    announce(g, f, vc)
    f.carry_on(g, f.announced)
