"""The step loop: run the step of the frame on top of the stack until a decision is pending or
the game ends, and what a step may do — ``emit`` events, ``push`` child frames, ``pop`` its frame
(optionally leaving a value in ``game.ret`` for its parent) or ``ask`` a decision.

Frames and their steps are described in :class:`.state.Frame`. Nothing is held in Python locals
across steps, so the state is complete plain data whenever the loop stops.
"""

from __future__ import annotations

import contextlib
from typing import Any

from . import rng
from .events import Event, GameEnded
from .keys import CardPick, RecastPick, SeatPick, card_keys, kind_of, read, value_of
from .registry import ruleset_of
from .state import Answer, Decision, Frame, Game


class IllegalAnswer(Exception):
    """An answer the pending decision does not admit; the game is unchanged."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class GameOver(Exception):
    """Raised internally to unwind the loop when the game has ended."""


def emit(g: Game, ev: Event) -> None:
    """Record an event produced by the running step."""
    g.out.append(ev)


def push(g: Game, frame: Frame) -> None:
    """Start a child procedure; it runs before the current frame resumes."""
    g.stack.append(frame)


_KEEP: Any = object()


def pop(g: Game, ret: Any = _KEEP) -> None:
    """Finish the running frame, handing ``ret`` (if given) to its parent.

    The running frame is removed even when its step pushed frames above it (a card move fires
    ``hand_emptied``/``equip_lost`` triggers): those run first, then the parent resumes. A frame
    that pops without a value leaves ``game.ret`` alone, so such triggers cannot clobber a
    value handed down before them.
    """
    stack = g.stack
    if 0 <= g.top < len(stack) - 1:
        del stack[g.top]
    else:
        stack.pop()
    if ret is not _KEEP:
        g.ret = ret


DECISION_KINDS = frozenset(
    ("play", "targets", "respond", "discard", "cards", "pick_card", "confirm", "choose", "draft")
)
"""Every kind of decision the engine asks (services/rules/README.md, "Decisions"): scenario
files name them in `expect.waiting`, clients draw each differently."""


def ask(
    g: Game,
    seat: int,
    kind: str,
    options: list[str],
    lo: int = 1,
    hi: int = 1,
    declinable: bool = True,
    info: dict[str, Any] | None = None,
) -> None:
    """Ask ``seat`` a decision; the asking frame reads the picks with :func:`answer` next step.

    A seat with no legal option is never asked (the answer is a decline), and a forced decision
    with exactly one possible answer is answered at once.
    """
    if not options or (declinable and hi == 0):
        g.answer = []
        return
    if not declinable and lo >= len(options) and g.auto_forced:
        g.answer = list(options)
        return
    g.pending = Decision(
        id=g.next_decision,
        seat=seat,
        kind=kind,
        options=options,
        min=lo,
        max=hi,
        declinable=declinable,
        info=info or {},
    )
    g.next_decision += 1


def ask_choice(g: Game, seat: int, options: list[str], about: str, **info: Any) -> None:
    """A forced ``choose`` decision ``about`` a skill or card (``info.about``)."""
    ask(g, seat, "choose", options, declinable=False, info={"about": about, **info})


def ask_confirm(g: Game, seat: int, skill: str, **info: Any) -> None:
    """Offer ``skill`` (or an effect) as a ``confirm`` decision; declining is "no"."""
    ask(g, seat, "confirm", ["yes"], info={"skill": skill, **info})


def ask_discard(
    g: Game,
    seat: int,
    cards: list[int],
    n: int,
    reason: str,
    declinable: bool = False,
    **info: Any,
) -> None:
    """``seat`` discards ``n`` of ``cards`` (all of them if fewer)."""
    n = min(n, len(cards))
    keys = card_keys(cards)
    ask(g, seat, "discard", keys, n, n, declinable, info={"count": n, "reason": reason, **info})


def answer(g: Game) -> list[str]:
    """The picks given to the last decision this frame asked (empty = declined)."""
    picks = g.answer
    g.answer = None
    return picks or []


def validate(d: Decision, a: Answer) -> None:
    """Raise IllegalAnswer unless ``a`` is an admissible answer to ``d``."""
    if a.decision != d.id:
        raise IllegalAnswer(f"decision {a.decision} is not pending (pending: {d.id})")
    if a.seat != d.seat:
        raise IllegalAnswer(f"seat {a.seat} may not answer decision {d.id} (it is seat {d.seat}'s)")
    picks = a.picks
    if not picks:
        if d.declinable:
            return
        raise IllegalAnswer(f"decision {d.id} ({d.kind}) may not be declined")
    if len(picks) == 1 and d.min <= 1 <= d.max:  # the usual answer: one pick, no set made
        if picks[0] not in d.options:
            raise IllegalAnswer(f"{picks[0]!r} is not a legal option for {d.kind}")
        return
    if len(set(picks)) != len(picks):
        raise IllegalAnswer("an option was picked twice")
    if len(picks) < d.min or len(picks) > d.max:
        raise IllegalAnswer(f"pick between {d.min} and {d.max} options, not {len(picks)}")
    legal = set(d.options)
    for p in picks:
        if p not in legal:
            raise IllegalAnswer(f"{p!r} is not a legal option for {d.kind}")


def explain(g: Game, d: Decision, a: Answer, reason: str) -> str:
    """``reason`` with the rule that forbids the first pick not offered, as the frame that asked
    ``d`` words it (``Frame.refusal``): "'seat:2' is not a legal option for targets: out of
    range …"."""
    bad = [p for p in a.picks if p not in d.options]
    if a.decision != d.id or a.seat != d.seat or not 0 <= g.top < len(g.stack):
        return reason
    if not bad and len(a.picks) <= d.max:
        return reason
    pick = bad[0] if bad else ""  # "": too many picks
    # a seat or card the game has, before any frame looks it up
    kind, choice = kind_of(pick), read(pick)
    if kind == "seat" and not (isinstance(choice, SeatPick) and choice.seat < len(g.players)):
        return f"{reason}: there is no seat {value_of(pick)}"
    if kind in ("card", "recast") and not (
        isinstance(choice, CardPick | RecastPick) and choice.id < len(g.cards)
    ):
        return f"{reason}: there is no card {value_of(pick)}"
    why = g.stack[g.top].refusal(g, d, pick)
    return f"{reason}: {why}" if why else reason


def submit(g: Game, a: Answer) -> list[Event]:
    """Apply an answer to the pending decision and run on; illegal answers change nothing."""
    d = g.pending
    if d is None:
        raise IllegalAnswer("no decision is pending" if not g.over else "the game has ended")
    try:
        validate(d, a)
    except IllegalAnswer as err:
        raise IllegalAnswer(ruleset_of(g).printed(g, explain(g, d, a, err.reason))) from None
    g.pending = None
    g.answer = list(a.picks)
    return advance(g)


def advance(g: Game) -> list[Event]:
    """Run until a decision is pending or the game is over; return the events produced."""
    stack = g.stack
    # Only ``end_game`` sets ``over``, and it raises GameOver: a step never returns to the loop
    # with the game over, so the loop asks only whether a decision is pending.
    if g.pending is None and not g.over:
        try:
            while stack:
                top = stack[-1]
                g.top = len(stack) - 1
                getattr(top, top.step)(g)
                if g.pending is not None:
                    break
        except GameOver:
            g.pending = None
    out = g.out
    g.out = []
    g.events_emitted += len(out)
    return out


def rand_below(g: Game, n: int) -> int:
    """A seeded random number in ``range(n)`` from the game's generator."""
    v = rng.below(g.seed, g.rng, n)
    g.rng += 1
    return v


def shuffle(g: Game, items: list[int]) -> list[int]:
    """A seeded permutation of ``items``."""
    perm, g.rng = rng.shuffle_indices(g.seed, g.rng, len(items))
    return [items[i] for i in perm]


def abandon(g: Game, reason: str) -> list[Event]:
    """End the game now as a draw with ``reason``: the table's own end, not the rules' (the
    platform's cap on a game's decisions or log, a game nobody can move). Whatever was pending
    is dropped; ``game_ended`` has no winners. A log records it as an input (entry kind
    ``abandon``), so a re-run ends the game at the same point."""
    if g.over:
        raise IllegalAnswer("the game has ended")
    g.pending = None
    with contextlib.suppress(GameOver):  # (end_game raises it to stop the step loop)
        end_game(g, [], draw=True, reason=reason)
    out = g.out
    g.out = []
    g.events_emitted += len(out)
    return out


def end_game(g: Game, winners: list[int], draw: bool = False, reason: str = "") -> None:
    """Mark the game over; the loop stops after the current step. A draw names its ``reason``
    (``core/options.py``: the reshuffle limit, an exhausted deck, a ruleset's own)."""
    g.over = True
    g.draw_game = draw
    g.winners = sorted(winners)
    roles = [p.role for p in g.players]
    emit(
        g,
        GameEnded(
            winners=sorted({roles[s] for s in winners}),
            winner_seats=g.winners,
            draw=draw,
            roles=roles,
            reason=reason,
        ),
    )
    raise GameOver
