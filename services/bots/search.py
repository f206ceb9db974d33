"""The ``hard`` policy: the heuristic, with key decisions checked by determinized look-ahead.

For a key decision — which play-phase card or skill (the heuristic's best few), whom a hostile
card targets, a 无懈可击, obeying 借刀杀人 — it takes the heuristic's answer and up to
``width - 1`` alternatives and plays each out on the same worlds (common random numbers: one
determinized state per sample, the hidden roles drawn jointly from the seat's belief by
:func:`.rollout.sample_roles`, every candidate played on a fork of it with the same seed), the
heuristic itself answering for every seat (:mod:`.rollout`) until ``turns`` turns have started,
and scores each end from its side (:func:`.value.value`: P(my side wins), a model fitted on
self-play). The comparison is paired: an alternative replaces the heuristic's answer only when
its mean advantage over the samples beats ``margin`` and ``z`` standard errors of the paired
differences. Ending the phase and a 桃 for a dying seat are not searched: searched, they (and
hostile targets, at a small margin) measured worse than the heuristic's own answer (README).

The budget (``budget_ms``, CPU time of the deciding thread, default 20, the heuristic's own
thinking included) really bounds it: the clock is read before every simulated decision, work
starts only within :data:`SLACK` of it, a sample cut short is dropped, and with fewer than two
complete samples the answer is the heuristic's.

Where the worlds come from: each is ``api.determinize`` of the game for this seat, from a seed
and the roles drawn for the sample (:meth:`SearchPolicy.worlds`). In self-play the policy is
given the game (``attach``) and deals them itself. A bot worker holds only the seat's view, so
there the engine deals them (GameService.Determinize, services/engine/worlds.py): the worker
calls :meth:`SearchPolicy.plan` (the heuristic's answer and the candidates; the worlds a search
needs, or none), asks the engine for those worlds, hands the states over (``provide``) and
then calls ``act``, which goes on from the plan. Without worlds (no game attached, none
provided, the engine refused) the answer is the heuristic's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..rules import api
from ..rules.api import Answer, Decision, Game, View
from .cardinfo import HOSTILE_CARDS
from .heuristic import HeuristicPolicy
from .play import play_scores, target_scores
from .rollout import Sim, play_out, sample_roles
from .threat import Reading
from .value import classes, value

SLACK = 0.9  # of the budget the search may start work in: the last step and the answer fit after
SEEDS = (1 << 64) - 1  # worlds' seeds are u64 (they travel in GameService.Determinize)


@dataclass
class Plan:
    """A decision planned: the heuristic's answer, the candidates to search (the heuristic's
    first), the worlds the search plays on (none if fewer than two candidates) and when thinking
    began (thread CPU seconds, for the budget)."""

    decision: int
    base: Answer
    cands: list[list[str]]
    worlds: list[tuple[int, dict[int, str]]]
    t0: float


class SearchPolicy(HeuristicPolicy):
    """Heuristic play plus determinized look-ahead on key decisions (see the module docstring)."""

    name = "hard"

    def __init__(
        self,
        seed: int,
        seat: int = -1,
        budget_ms: float = 20.0,
        samples: int = 8,
        turns: int = 1,
        strict: bool = False,
    ) -> None:
        super().__init__(seed, seat, strict=strict)
        self.search_budget_ms = budget_ms
        self.samples, self.turns = samples, turns
        self.cap = 80  # simulated decisions per play-out
        self.width = 3  # candidates per decision, the heuristic's answer first
        self.margin = 0.02  # mean advantage an alternative needs (P(win), two points)
        self.z = 1.5  # ... and this many standard errors of the paired differences
        # hostile targets searched lost to the heuristic's own choice at every margin tried
        # (README), and re-tried with the tempered belief (only the runner-up, when the belief
        # held it about as hostile) measured level, so they are not searched
        self.kinds = frozenset(("play", "respond"))
        # ending the play phase, and giving a 桃 to a dying seat the heuristic would not save,
        # measured as worse than the heuristic's answer when searched (README; the 桃 re-tried
        # with the tempered belief measured level), so not searched
        self.try_end = False
        # role classes that never search (an experiment's knob: skipping the lord or the
        # renegade measured level, README), none by default
        self.skip: frozenset[str] = frozenset()
        # phase keys (value.phase_key's names, read from my belief: CLASS while a rebel lives,
        # else CLASS/late) in which I never search (an experiment's knob: the renegade quiet
        # while a rebel lives measured level with searching, README stop 35), none by default
        self.quiet: frozenset[str] = frozenset()
        self.responses = ("无懈可击", "借刀杀人")  # responses searched (need or reason)
        self.fitted = True  # the fitted value model where there is one, else the hand-set score
        self.hand_set_for: frozenset[str] = frozenset()  # phase keys scored by the hand-set score
        self.opponents = "belief"  # how the other seats read roles in play-outs (or "oracle")
        self._game: Callable[[], Game] | None = None
        self._plan: Plan | None = None  # planned by `plan`, answered by `act`
        self._dealt: list[Game] | None = None  # the worlds of the planned decision (`provide`)
        self.searched = 0
        self.changed = 0  # searches whose answer was not the heuristic's
        self.cut = 0  # searches stopped by the budget
        self.done = 0  # complete samples, over every search
        self.steps = 0  # simulated decisions, over every search
        self.log: list[tuple[Decision, list[str], list[str]]] | None = None  # changes (tests)
        self._last: list[list[float]] = []  # the last search's paired differences

    def attach(self, game: Callable[[], Game]) -> None:
        """Where the current game is (only ever passed to api.determinize with my view)."""
        self._game = game

    def plan(self, d: Decision, view: View | None = None) -> list[tuple[int, dict[int, str]]]:
        """Think about ``d`` up to the search: the heuristic's answer and the candidates (kept for
        ``act``); returns the worlds the search needs, as (seed, roles drawn for the hidden
        seats), or [] if there is nothing to search."""
        t0 = time.thread_time()
        self._dealt = None
        base = super().act(d, view)
        cands: list[list[str]] = []
        if (
            view is not None
            and view.seats
            and self.mem.belief is not None
            and d.kind in self.kinds
            and self.mem.klass not in self.skip
            and not (self.quiet and self.phase(view) in self.quiet)
        ):
            try:
                cands = self._candidates(d, view, list(base.picks))
            except Exception:
                if self.strict:
                    raise
                self.errors += 1
        worlds = self.worlds(d) if len(cands) >= 2 else []
        self._plan = Plan(d.id, base, cands, worlds, t0)
        return worlds

    def phase(self, view: View) -> str:
        """My phase as :func:`.value.phase_key` names it, read from my belief: my class while
        a rebel is (by the belief's expected count, rounded) alive, else ``CLASS/late``."""
        assert self.mem.belief is not None
        marg = self.mem.belief.marginals()
        rebels = sum(marg[s.seat].get("rebel", 0.0) for s in view.seats if s.alive)
        return self.mem.klass if rebels >= 0.5 else f"{self.mem.klass}/late"

    def worlds(self, d: Decision) -> list[tuple[int, dict[int, str]]]:
        """The worlds a search of ``d`` plays on: (seed, the hidden roles drawn from my belief)."""
        assert self.mem.belief is not None
        out = []
        for i in range(self.samples):
            seed = (self.seed * 7919 + d.id * 31 + i) & SEEDS
            out.append((seed, sample_roles(self.mem.belief, seed)))
        return out

    def provide(self, states: list[Game]) -> None:
        """The worlds of the planned decision, dealt elsewhere (by the engine), in order."""
        self._dealt = states

    def act(self, d: Decision, view: View | None = None) -> Answer:
        """The heuristic's answer, replaced by a better-scoring candidate on key decisions."""
        plan = self._plan
        self._plan = None
        if plan is None or plan.decision != d.id:
            self.plan(d, view)
            plan, self._plan = self._plan, None
            assert plan is not None
        base, cands = plan.base, plan.cands
        dealt, self._dealt = self._dealt, None
        if len(cands) < 2 or view is None or (self._game is None and not dealt):
            return base
        try:
            best = self._search(d, view, plan, dealt)
        except Exception:
            if self.strict:
                raise
            self.errors += 1
            return base
        if best != cands[0]:
            self.changed += 1
            if self.log is not None:
                self.log.append((d, cands[0], best))
            if d.kind == "play":
                self.mem.last_play = best[0]
        return Answer(decision=d.id, seat=d.seat, picks=best)

    def _candidates(self, d: Decision, view: View, base: list[str]) -> list[list[str]]:
        """The heuristic's answer first, then the alternatives worth checking."""
        out = [base]
        r = Reading(self.mem, view, d.seat)
        if d.kind == "play":
            for _, o in play_scores(r, d):
                if [o] not in out and len(out) < self.width:
                    out.append([o])
            if self.try_end and base != ["end"] and "end" in d.options:
                out.append(["end"])
        elif d.kind == "targets" and str(d.info.get("card", "")) in HOSTILE_CARDS and d.max == 1:
            if not base:
                return out  # declined: nothing worth hitting
            score = target_scores(r, d)
            for t in sorted(score, key=lambda t: (-score[t], t)):
                if [f"seat:{t}"] not in out and len(out) < self.width:
                    out.append([f"seat:{t}"])
        elif d.kind == "respond" and (
            d.info.get("need") in self.responses or d.info.get("reason") in self.responses
        ):
            if d.info.get("need") == "桃" and int(d.info.get("target", -1)) == d.seat:
                return out  # saving myself is never wrong
            first = [o for o in d.options if o.startswith("card:")][:1]
            out.append([] if base else first)
        return [c for c in out if c or d.declinable]

    def _search(
        self,
        d: Decision,
        view: View,
        plan: Plan,
        dealt: list[Game] | None,
    ) -> list[str]:
        cands, t0 = plan.cands, plan.t0
        self.searched += 1
        game = self._game() if dealt is None and self._game is not None else None
        diffs: list[list[float]] = [[] for _ in cands]  # paired: value(c) - value(base)

        def over() -> bool:
            return (time.thread_time() - t0) * 1000 > self.search_budget_ms * SLACK

        for i, (seed, roles) in enumerate(plan.worlds):
            if over():
                self.cut += 1
                break
            if dealt is not None:
                if i >= len(dealt):
                    break
                world = dealt[i]
            else:
                assert game is not None
                hint = {t: {r: 1.0} for t, r in roles.items()}
                world = api.determinize(game, d.seat, hint, seed, view=view, number=d.id)
            sim = Sim(world, d.seat, self.mem, self.opponents, self.strict)
            of = classes(world)
            scores: list[float] = []
            for c in cands:
                first = Answer(decision=d.id, seat=d.seat, picks=c)
                g, m = sim.fork(first)
                if not play_out(sim, g, m, self.turns, self.cap, over, first):
                    break
                scores.append(value(g, d.seat, of, self.fitted, self.hand_set_for))
            self.steps += sim.steps
            self.errors += sim.errors
            if len(scores) < len(cands):
                self.cut += 1
                break
            self.done += 1
            for k, v in enumerate(scores):
                diffs[k].append(v - scores[0])
        n = len(diffs[0])
        self._last = diffs
        if n < 2:
            return cands[0]
        best, gain = 0, 0.0
        for k in range(1, len(cands)):
            mean = sum(diffs[k]) / n
            sd = math.sqrt(sum((x - mean) ** 2 for x in diffs[k]) / (n - 1))
            lead = mean - self.z * sd / math.sqrt(n)
            if mean > self.margin and lead > gain:
                best, gain = k, lead
        return cands[best]
