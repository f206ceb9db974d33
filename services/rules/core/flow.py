"""Turn flow (§1.2, §1.5): rounds, turns, the six phases and their default actions."""

from __future__ import annotations

import msgspec

from .engine import answer, ask, emit, handler, pop, push
from .events import Nullified, PhaseSkipped, PhaseStarted, TurnEnded, TurnStarted
from .judge import Judge
from .query import hand_limit, next_alive, with_hook
from .skills import SKILLS
from .state import PHASES, Frame, Game
from .triggers import fire
from .use import NullifyWindow, UseCard, ask_play, specs_of
from .vcard import physical
from .zones import discard_from, draw, move


class GameFrame(Frame, tag="game"):
    """The root: turns in order, forever (the game ends by ``end_game``)."""

    seat: int = 0
    first_phase: str = "start"
    extra: list[int] = msgspec.field(default_factory=list)  # seats owed an extra turn


class TurnFrame(Frame, tag="turn"):
    """One turn: turn start, the six phases (unless skipped), turn end."""

    seat: int
    pi: int = 0
    skip: list[str] = msgspec.field(default_factory=list)
    aborted: bool = False
    begin: bool = True


class PhaseFrame(Frame, tag="phase"):
    """One phase: phase-start triggers, the default action, phase-end triggers."""

    seat: int
    phase: str


class DrawPhase(Frame, tag="draw_phase"):
    """Draw ``n`` cards (skills at ``draw_count`` change ``n``)."""

    seat: int
    n: int = 2


class PlayPhase(Frame, tag="play_phase"):
    """The active seat uses cards and skills one at a time until it ends the phase."""

    seat: int


class DiscardPhase(Frame, tag="discard_phase"):
    """Discard down to the hand limit."""

    seat: int


class JudgePhase(Frame, tag="judge_phase"):
    """Resolve the delayed tricks in the judgement area, last placed first."""

    seat: int
    done: list[int] = msgspec.field(default_factory=list)


class DelayedResolve(Frame, tag="delayed"):
    """One delayed trick: 无懈可击 window, judgement, effect."""

    seat: int
    card: int
    name: str


@handler(GameFrame)
def _game(g: Game, f: GameFrame) -> None:
    if f.pc == 0:
        f.pc = 1
        g.round = max(g.round, 1)
        push(
            g,
            TurnFrame(seat=f.seat, pi=PHASES.index(f.first_phase), begin=f.first_phase == "start"),
        )
        return
    prev = f.seat
    while f.extra:
        # an extra turn (额外回合) comes right after the turn that earned it; it neither starts a
        # round nor moves the normal order on (§1.2), and a seat that died meanwhile loses it
        extra = f.extra.pop(0)
        if g.players[extra].alive:
            push(g, TurnFrame(seat=extra))
            return
    nxt = next_alive(g, prev)
    if nxt <= prev:  # the order passed seat 0's position: a new round (§1.2)
        g.round += 1
    f.seat = nxt
    push(g, TurnFrame(seat=nxt))


@handler(TurnFrame)
def _turn(g: Game, f: TurnFrame) -> None:
    # Runs on through steps whose triggers had no listener, returning only when a child frame
    # was pushed (most turns fire nothing, so this saves a loop round per step).
    p = g.players[f.seat]
    me = len(g.stack) - 1
    while True:
        if f.pc == 0:
            f.pc = 1
            g.current = f.seat
            g.turn_marks = {}
            if f.begin:
                emit(g, TurnStarted(seat=f.seat, round=g.round))
                if fire(g, "turn_start", me):
                    return
        elif f.pc == 1:
            if f.aborted or not p.alive or f.pi >= len(PHASES):
                f.pc = 3
                continue
            f.pc = 2
            if fire(g, "before_phase", me, data={"phase": PHASES[f.pi]}):
                return
        elif f.pc == 2:
            f.pc = 1
            phase = PHASES[f.pi]
            f.pi += 1
            if phase in f.skip:
                emit(g, PhaseSkipped(seat=f.seat, phase=phase))
                continue
            push(g, PhaseFrame(seat=f.seat, phase=phase))
            return
        elif f.pc == 3:
            f.pc = 4
            g.phase = ""
            emit(g, TurnEnded(seat=f.seat))
            if p.alive and fire(g, "turn_end", me):
                return
        else:
            for q in g.players:
                if q.marks:
                    q.marks = {k: v for k, v in q.marks.items() if not k.startswith("t:")}
            g.turn_marks = {}
            pop(g)
            return


_BODY: dict[str, type[JudgePhase | DrawPhase | PlayPhase | DiscardPhase]] = {
    "judge": JudgePhase,
    "draw": DrawPhase,
    "play": PlayPhase,
    "discard": DiscardPhase,
}


@handler(PhaseFrame)
def _phase(g: Game, f: PhaseFrame) -> None:
    me = len(g.stack) - 1
    if f.pc == 0:
        f.pc = 1
        g.phase = f.phase
        emit(g, PhaseStarted(seat=f.seat, phase=f.phase))
        if fire(g, "phase_start", me, data={"phase": f.phase}, seats=[f.seat]):
            return
    if f.pc == 1:
        f.pc = 2
        body = _BODY.get(f.phase)
        if body is not None:
            push(g, body(seat=f.seat))
            return
    if f.pc == 2:
        f.pc = 3
        if fire(g, "phase_end", me, data={"phase": f.phase}, seats=[f.seat]):
            return
    pop(g)


@handler(DrawPhase)
def _draw_phase(g: Game, f: DrawPhase) -> None:
    if f.pc == 0:
        f.pc = 1
        fire(g, "draw_count", len(g.stack) - 1, seats=[f.seat])
        return
    draw(g, f.seat, f.n, reason="draw_phase")
    pop(g)


def play_options(g: Game, seat: int) -> list[str]:
    """The cards ``seat`` may use and the skills it may activate now."""
    p = g.players[seat]
    out = []
    cards = g.cards
    specs = specs_of(g)
    usable: dict[str, bool] = {}  # by name: same-named cards are usable alike
    for cid in p.hand:
        name = cards[cid].name
        spec = specs.get(name)
        if spec is None:
            continue
        ok = usable.get(name)
        if ok is None:
            ok = usable[name] = spec.can_use(g, seat, physical(g, cid))
        if ok:
            out.append(f"card:{cid}")
        if spec.recastable:
            out.append(f"recast:{cid}")
    for s in with_hook(g, seat, "can_activate"):
        if s.can_activate(g, seat):
            out.append(f"skill:{s.name}")
    return out


@handler(PlayPhase)
def _play_phase(g: Game, f: PlayPhase) -> None:
    if f.pc == 0:
        f.pc = 1
        ask_play(g, f.seat, play_options(g, f.seat))
        return
    f.pc = 0
    picks = answer(g)
    if not picks or picks[0] == "end":
        pop(g)
        return
    pick = picks[0]
    if pick.startswith("card:"):
        push(g, UseCard(user=f.seat, vc=physical(g, int(pick[5:]))))
    elif pick.startswith("recast:"):
        from ..cards.tricks import recast

        recast(g, f.seat, int(pick[7:]))
    else:
        SKILLS[pick[6:]].activate(g, f.seat)


@handler(DiscardPhase)
def _discard_phase(g: Game, f: DiscardPhase) -> None:
    p = g.players[f.seat]
    if f.pc == 0:
        n = len(p.hand) - hand_limit(g, f.seat)
        if n <= 0:
            pop(g)
            return
        f.pc = 1
        ask(
            g,
            f.seat,
            "discard",
            [f"card:{c}" for c in p.hand],
            n,
            n,
            declinable=False,
            info={"count": n, "reason": "discard_phase"},
        )
        return
    discard_from(g, f.seat, [int(x[5:]) for x in answer(g)], reason="discard_phase")
    pop(g)


@handler(JudgePhase)
def _judge_phase(g: Game, f: JudgePhase) -> None:
    p = g.players[f.seat]
    todo = [c for c in p.judge if c not in f.done] if p.alive else []
    if not todo:
        pop(g)
        return
    cid = todo[-1]
    f.done.append(cid)
    push(g, DelayedResolve(seat=f.seat, card=cid, name=g.as_name.get(cid, g.cards[cid].name)))


@handler(DelayedResolve)
def _delayed(g: Game, f: DelayedResolve) -> None:
    from ..cards.delayed import DelayedSpec  # the delayed tricks define their own outcomes

    spec = specs_of(g)[f.name]
    assert isinstance(spec, DelayedSpec)
    if f.pc == 0:
        f.pc = 1
        move(g, [f.card], "judge", "processing", f.seat, reason="judge_phase")
        push(g, NullifyWindow(name=f.name, target=f.seat))
        return
    if f.pc == 1:
        if g.ret:
            emit(g, Nullified(target=f.seat, name=f.name))
            spec.on_nullified(g, f)
            pop(g)
            return
        f.pc = 2
        push(g, Judge(seat=f.seat, reason=f.name))
        return
    if f.pc == 2:
        f.pc = 3
        spec.on_judged(g, f, bool(g.ret))
        return
    pop(g)
