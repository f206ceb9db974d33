"""The ``hard`` policy: the heuristic, with key decisions checked by determinized look-ahead.

For a key decision — whom a hostile card targets; with ``responses`` on, also a 桃 for a dying
seat, obeying 借刀杀人 and a 无懈可击 — it takes the heuristic's answer and a few alternatives
(never "decline" for targets: the play decision already chose to use the card; offered, the
search declined most attacks, the card kept in hand scoring above an uncertain hit), and for each
of ``samples``
states the seat could be in (``api.determinize`` with the seat's own view and its role belief)
plays every candidate out on a fork until the card has resolved (at most ``depth`` decisions,
every seat answering by a quick rule that uses the sampled roles), then scores the table from its
side: HP, cards and lives of its team against the others, a won or lost game above all. Every
candidate is scored on the same samples; the best average wins, ties go to the heuristic.

The budget (``budget_ms``, CPU time, default 20) really bounds it: the clock is read before every
simulated decision, a sample round cut short is dropped, and with no complete round the answer
is the heuristic's. Look-ahead needs the game state to determinize from (``attach``): self-play
attaches it; a bot worker holds only the seat's view, so there the policy plays as the heuristic
(and the level is not offered to tables with people, see :mod:`.levels`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..rules import api
from ..rules.api import Answer, Decision, Game, View
from .cardinfo import HOSTILE_CARDS
from .heuristic import HeuristicPolicy
from .roles import classes_of
from .threat import relations

AOE = ("南蛮入侵", "万箭齐发")
KEY_RESPONSES = ("桃", "无懈可击")


class SearchPolicy(HeuristicPolicy):
    """Heuristic play plus determinized look-ahead on key decisions (see the module docstring)."""

    name = "hard"

    def __init__(
        self,
        seed: int,
        seat: int = -1,
        budget_ms: float = 20.0,
        samples: int = 4,
        depth: int = 24,
        strict: bool = False,
    ) -> None:
        super().__init__(seed, seat, strict=strict)
        self.search_budget_ms = budget_ms
        self.samples, self.depth = samples, depth
        # responses (桃, 无懈可击, 借刀) are off by default: the quick rollout rule saves a sampled
        # teammate at once, so declining looks free (someone else pays) — the suspected cause of
        # the first version (responses searched, team-sign value) losing standard 8 by 15-18
        # points as the lord's side and as the rebels
        self.responses = False
        # an alternative must beat the heuristic's answer by this much on average (about two
        # HP of an enemy): a few samples of random hands are noisy, the heuristic's pick is not
        self.margin = 2.0
        self._game: Callable[[], Game] | None = None
        self.searched = 0
        self.cut = 0  # searches stopped by the budget

    def attach(self, game: Callable[[], Game]) -> None:
        """Where the current game is (only ever passed to api.determinize with my view)."""
        self._game = game

    def act(self, d: Decision, view: View | None = None) -> Answer:
        """The heuristic's answer, replaced by a better-scoring candidate on key decisions."""
        base = super().act(d, view)
        if self._game is None or view is None or not view.seats or self.mem.belief is None:
            return base
        cands = self._candidates(d, list(base.picks))
        if len(cands) < 2:
            return base
        t0 = time.thread_time()
        try:
            best = self._search(d, view, cands, t0)
        except Exception:
            if self.strict:
                raise
            self.errors += 1
            return base
        if not best and d.kind == "targets" and self.mem.last_play:
            self.mem.cancelled.add(self.mem.last_play)  # do not offer the same card again
        return Answer(decision=d.id, seat=d.seat, picks=best)

    def _candidates(self, d: Decision, base: list[str]) -> list[list[str]]:
        """The heuristic's answer first, then the alternatives worth checking."""
        out = [base]
        if d.kind == "targets" and str(d.info.get("card", "")) in HOSTILE_CARDS and d.max == 1:
            for o in d.options:  # whom, not whether: the play decision chose to use the card
                if [o] != base and len(out) < 4:
                    out.append([o])
        elif (
            self.responses
            and d.kind == "respond"
            and (d.info.get("need") in KEY_RESPONSES or d.info.get("reason") == "借刀杀人")
        ):
            first = [o for o in d.options if o.startswith("card:")][:1]
            out.append([] if base else first)
        return [c for c in out if c or d.declinable]

    def _search(self, d: Decision, view: View, cands: list[list[str]], t0: float) -> list[str]:
        self.searched += 1
        belief = self.mem.belief
        assert belief is not None and self._game is not None
        marg: dict[int, dict[str, float]] = {
            t: {r: belief.prob(t, r) for r in belief.dealt} for t in range(len(view.seats))
        }
        totals = [0.0] * len(cands)
        rounds = 0
        game = self._game()
        for i in range(self.samples):
            if self._over(t0):
                self.cut += 1
                break
            world = api.determinize(game, d.seat, marg, self.seed * 7919 + d.id * 31 + i, view=view)
            scores = []
            for c in cands:
                if self._over(t0):
                    break
                g = api.fork(world)
                api.submit(g, Answer(decision=d.id, seat=d.seat, picks=c))
                v = self._rollout(g, d.seat, t0)
                if v is None:
                    break
                scores.append(v)
            if len(scores) < len(cands):
                self.cut += 1
                break
            totals = [a + b for a, b in zip(totals, scores, strict=True)]
            rounds += 1
        if not rounds:
            return cands[0]
        best = max(range(len(cands)), key=lambda k: (totals[k], -k))
        gain = (totals[best] - totals[0]) / rounds
        return cands[best] if gain > self.margin else cands[0]

    def _over(self, t0: float) -> bool:
        return (time.thread_time() - t0) * 1000 > self.search_budget_ms

    def _rollout(self, g: Game, me: int, t0: float) -> float | None:
        """Play on until my next play-phase decision, the game's end or ``depth`` decisions;
        the table's value for me, or None when the budget ran out."""
        team = _teams(g)
        for _ in range(self.depth):
            if g.over:
                break
            if self._over(t0):
                return None
            d = g.pending
            assert d is not None
            if d.kind == "play" and d.seat == me:
                break
            api.submit(g, Answer(decision=d.id, seat=d.seat, picks=_quick(g, d, team)))
        return _value(g, me, team)


def _teams(g: Game) -> list[str]:
    """Each seat's team under the (sampled) roles: lord's side, rebels, a third camp, or alone."""
    rs = api.RULESETS[g.ruleset]
    cls = classes_of({p.role for p in g.players} | set(rs.camps), rs.camps)
    out = []
    for p in g.players:
        c = cls.get(p.role, "renegade") if p.role else f"seat{p.seat}"
        out.append(
            "lord" if c in ("lord", "loyalist") else (f"alone{p.seat}" if c == "renegade" else c)
        )
    return out


def _quick(g: Game, d: Decision, team: list[str]) -> list[str]:
    """A fast answer that knows the sampled roles: enemies are targeted, teammates saved."""
    mine = team[d.seat]
    if d.kind == "play":
        return ["end"] if "end" in d.options else d.options[: max(d.min, 1)]
    if d.kind == "targets":
        seats = [int(o[5:]) for o in d.options if o.startswith("seat:")]
        foes = sorted((t for t in seats if team[t] != mine), key=lambda t: g.players[t].hp)
        picks = [f"seat:{t}" for t in foes[: d.max]]
        if len(picks) >= d.min and (picks or d.declinable):
            return picks
    if d.kind == "respond":
        need, tgt = d.info.get("need"), int(d.info.get("target", -1))
        cards = [o for o in d.options if o.startswith("card:")]
        if need == "桃":
            return cards[:1] if 0 <= tgt < len(team) and team[tgt] == mine else []
        if need == "无懈可击":
            return []
        if d.info.get("reason") == "借刀杀人":
            return cards[:1] if 0 <= tgt < len(team) and team[tgt] != mine else []
        return cards[:1]
    if d.declinable:
        return []
    return list(d.options[: max(d.min, 1)])


def _value(g: Game, me: int, team: list[str]) -> float:
    """The table from ``me``'s side: a decided game dominates, else lives, HP and cards, each
    seat weighted by how much my role wants it to prosper (the heuristic's relations under the
    sampled roles: a renegade props up the lord while the rebels are strong)."""
    if g.over:
        return 100.0 if me in g.winners else -100.0
    rs = api.RULESETS[g.ruleset]
    cls = classes_of({p.role for p in g.players} | set(rs.camps), rs.camps)
    of = [cls.get(p.role, "renegade") for p in g.players]
    alive = [p for p in g.players if p.alive]
    rel = relations(
        of[me],
        sum(of[p.seat] == "rebel" for p in alive),
        sum(of[p.seat] in ("lord", "loyalist") for p in alive),
        sum(of[p.seat] == "renegade" for p in alive),
    )
    v = 0.0
    for p in alive:
        sign = 1.0 if p.seat == me else rel.get(of[p.seat], 0.0)
        v += sign * (6.0 + p.hp + 0.3 * len(p.hand))
    return v
