"""Play-outs for the ``hard`` policy: a determinized world played forward by the heuristic itself.

A *world* is one state the searching seat could be in (``api.determinize``: its view kept, what
it has not seen — hands, pile, roles, generals — and the seed resampled), with the hidden roles
drawn jointly from the seat's belief (:func:`sample_roles`). :func:`play_out` plays a fork of it
forward: every seat answers with the heuristic's own rules (:func:`.heuristic.decide`), reading
a view built from the world for that seat alone (its own hand, everyone's public areas) and a
copy of the searcher's memory of public things (the trick being resolved, the 无懈可击 chain,
generals' skills). Each other seat knows its own role and the revealed ones, and reads the rest
as the searcher reads the public evidence (:func:`_public_minds`: the searcher's marginals, the
searcher's own seat at the prior of the unrevealed cards, since nobody else knows it; a belief
of each seat's own, updated through the play-out, would cost far more than the budget allows);
``opponents="oracle"`` tells them the world's roles instead. The searcher keeps its own belief,
so its own simulated choices are as uncertain as its real ones (no strategy fusion for the
decision being searched). It stops at a horizon of turns, the game's end or a decision cap,
and :func:`.value.value` scores the result from the searcher's side.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

from ..rules import api
from ..rules.api import Answer, Game, SeatView, View, rng
from ..rules.api import events as ev
from .heuristic import decide, legal, safe_default
from .memory import Memory
from .roles import Belief, FixedBelief, RoleBelief, make_belief

MAX_PLAYS = 12  # play-phase decisions per phase in a play-out before it just ends the phase


def sample_roles(belief: Belief, seed: int, counter: int = 0) -> dict[int, str]:
    """One joint draw of the hidden seats' roles from ``belief`` (seat -> role); the exact belief
    draws a whole arrangement, the factored one seat by seat from its marginals."""
    out: dict[int, str] = dict(belief.known_role)
    pool = dict(belief.pool)
    if isinstance(belief, RoleBelief) and belief.assign:
        top = max(belief.logw)
        w = [math.exp(x - top) for x in belief.logw]
        x = rng.random_u64(seed, counter) / 2.0**64 * sum(w)
        pick = belief.assign[-1]
        for wk, a in zip(w, belief.assign, strict=True):
            if x < wk:
                pick = a
                break
            x -= wk
        classes = {s: pick[i] for s, i in belief.index.items() if s not in belief.known}
    else:
        marg = belief.marginals()
        classes = {}
        for k, s in enumerate(s for s in belief.hidden if s not in belief.known):
            m = marg[s]
            total = sum(m.values()) or 1.0
            x = rng.random_u64(seed, counter + 1 + k) / 2.0**64 * total
            c = max(m, key=lambda c: m[c]) if m else ""
            for c2, p in sorted(m.items()):
                if x < p:
                    c = c2
                    break
                x -= p
            classes[s] = c
    for s, c in sorted(classes.items()):
        role = next((r for r, k in sorted(pool.items()) if k > 0 and belief.of(r) == c), "")
        if role:
            pool[role] -= 1
            out[s] = role
    return out


def _public_minds(world: Game, me: int, mem: Memory, belief: Belief) -> list[Belief | None]:
    """What every other seat may believe: my reading of the public evidence (my marginals, my
    own seat at the prior of the unrevealed cards, since they do not know my role), its own role
    and the revealed ones known."""
    cls = mem.cls
    cards = [p.role for p in world.players]
    public = {p.seat: p.role for p in world.players if p.role_revealed or not p.alive}
    public.update(belief.known_role)
    public.pop(me, None)
    hidden = [cls.get(r, "renegade") for s, r in enumerate(cards) if s not in public]
    prior = {c: hidden.count(c) / len(hidden) for c in set(hidden)} if hidden else {}
    mine = belief.marginals()
    base = [
        {cls.get(public[s], "renegade"): 1.0}
        if s in public
        else (dict(prior) if s == me else dict(mine[s]))
        for s in range(len(cards))
    ]
    out: list[Belief | None] = []
    for x, role in enumerate(cards):
        marg = list(base)
        marg[x] = {cls.get(role, "renegade"): 1.0}
        out.append(FixedBelief(cards, {**public, x: role}, cls, marg))
    return out


def view_of(g: Game, seat: int) -> View:
    """``seat``'s view of world ``g``: its own hand, everyone's public state."""
    seats = [
        SeatView(
            seat=p.seat,
            general=p.general,
            role=p.role if p.seat == seat or p.role_revealed or not p.alive else "",
            hp=p.hp,
            max_hp=p.max_hp,
            alive=p.alive,
            hand_count=len(p.hand),
            hand=list(p.hand) if p.seat == seat else [],
            equip=list(p.equip.values()),
            judge=list(p.judge),
            chained=p.chained,
        )
        for p in g.players
    ]
    return View(viewer=seat, ruleset=g.ruleset, seats=seats, draw_count=len(g.draw))


class Sim:
    """One world and the minds that play it: the searcher's memory (and belief) for its seat; for
    every other seat a copy of it with that seat's mind (:func:`_public_minds`, or told the
    world's roles with ``opponents="oracle"`` or in a game without roles)."""

    def __init__(
        self, world: Game, me: int, mem: Memory, opponents: str = "belief", strict: bool = False
    ) -> None:
        self.world, self.me = world, me
        self.strict = strict  # a simulated seat's error raises (tests) instead of being counted
        self.errors = 0  # simulated answers that raised and were replaced by the safe default
        roles = {p.seat: p.role for p in world.players}
        self.roles = [p.role for p in world.players]
        cards = [p.role for p in world.players]
        self.known = make_belief(cards, roles, mem.cls) if not mem.rivals else None
        self.mine = mem
        self.steps = 0  # simulated decisions, every play-out of this world
        self.minds: list[Belief | None] = [self.known] * len(cards)
        if opponents == "belief" and mem.belief is not None and not mem.rivals:
            self.minds = _public_minds(world, me, mem, mem.belief)

    def fork(self, first: Answer | None = None) -> tuple[Game, Memory]:
        """A fresh fork of the world and a memory of its public things to play it with
        (``first``: the searched answer, remembered as my last play if it is one)."""
        m = copy.copy(self.mine)
        d = self.world.pending
        if first is not None and first.picks and d is not None and d.kind == "play":
            m.last_play = first.picks[0]
        m.judge_as = dict(m.judge_as)
        m.skills = dict(m.skills)
        m.cancelled = set(m.cancelled)
        m.seen_roles = dict(m.seen_roles)
        m.true_roles = None
        return api.fork(self.world), m

    def answer(self, g: Game, m: Memory, plays: list[int]) -> Answer:
        """The heuristic's answer for the pending decision of ``g``, from that seat's side."""
        d = g.pending
        assert d is not None
        s = d.seat
        role = self.roles[s]
        m.seat, m.role = s, role
        m.klass = m.cls.get(role, "renegade") if role else ""
        m.belief = self.mine.belief if s == self.me else self.minds[s]
        if d.kind == "play":
            plays[s] += 1
            if plays[s] > MAX_PLAYS:
                return Answer(decision=d.id, seat=s, picks=safe_default(d))
        try:
            picks = decide(m, view_of(g, s), d)
        except Exception:
            if self.strict:
                raise
            self.errors += 1
            picks = None
        if picks is None or not legal(d, picks):
            picks = safe_default(d)
        return Answer(decision=d.id, seat=s, picks=picks)


def play_out(
    sim: Sim,
    g: Game,
    m: Memory,
    turns: int,
    cap: int,
    over: Callable[[], bool],
    first: Answer | None = None,
) -> bool:
    """Play ``g`` forward (after submitting ``first``) until ``turns`` more turns have started,
    the game ends or ``cap`` decisions were made; False when ``over()`` (the budget) said stop."""
    plays = [0] * len(g.players)
    started = 0
    step = 0
    pending: list[ev.Event] = api.submit(g, first) if first is not None else []
    while True:
        m.belief = sim.known  # events never touch the searcher's real belief
        for e in pending:
            m.observe(e)
            if isinstance(e, ev.TurnStarted):
                started += 1
                plays = [0] * len(g.players)
            elif isinstance(e, ev.PhaseStarted):
                plays = [0] * len(g.players)
        if g.over or started >= turns or step >= cap:
            return True
        if over():
            return False
        pending = api.submit(g, sim.answer(g, m, plays))
        step += 1
        sim.steps += 1
