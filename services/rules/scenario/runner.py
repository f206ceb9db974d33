"""Play a scenario through the engine exactly as SCENARIOS.md "How the runner plays the script"
says, then check its expectations. ``python -m services.rules.scenario.runner PATH...`` and
``arena scenario run PATH...`` print ``PASS``/``FAIL`` lines and ``N passed, N failed``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from .. import api
from ..core.engine import IllegalAnswer
from ..core.events import CardUsed, Event
from ..core.ruleset import RULESETS
from ..core.skills import SKILLS
from ..core.state import Answer, Decision, Game
from .checks import check_expect
from .loader import load_paths
from .model import CardRef, Intent, Scenario, ScenarioFormatError, Step
from .table import TableError, build, describe

MAX_DECISIONS = 2000
SINGLE_DECISION = ("choose", "discard", "pass", "end")


class ScenarioFailed(Exception):
    """The scenario did not hold; the message says why."""


class _Stop(Exception):
    """Ends the run early after an expected rejection."""


class Progress:
    """How much of the current step's intent has been used up by earlier decisions."""

    def __init__(self) -> None:
        self.started = False
        self.cards_done = False
        self.targets_done = 0
        self.used_as = False


class Runner:
    """Plays one scenario."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.g, self.refs = build(sc)
        self.g.auto_forced = False  # the runner answers forced single-answer decisions itself
        self.events: list[Event] = []
        self.step = 0
        self.progress = Progress()

    # --- translating intents ------------------------------------------------------------------
    def cid(self, ref: CardRef) -> int:
        if ref not in self.refs:
            raise ScenarioFailed(f"{ref} is not on the table")
        return self.refs[ref]

    def card_opts(self, refs: Iterable[CardRef], d: Decision) -> list[str] | None:
        keys = [f"card:{self.cid(r)}" for r in refs]
        return keys if keys and all(k in d.options for k in keys) else None

    def skill_for(self, intent: Intent, d: Decision) -> str | None:
        """The option of a conversion/providing skill that turns the intent's cards into
        ``as NAME`` (by the skill's ``converts`` name, else the only skill offered)."""
        skills = [o for o in d.options if o.startswith("skill:")]
        want = intent.skill or intent.as_name
        for o in skills:
            sk = SKILLS.get(o[6:])
            if sk is not None and (o[6:] == want or getattr(sk, "converts", "") == want):
                return o
        return skills[0] if len(skills) == 1 else None

    def skill_name(self, it: Intent) -> str | None:
        """The engine's name of the intent's skill (an equipment effect may be printed under the
        ruleset's card name, e.g. seed 000's 护官符 for 八卦阵)."""
        if it.skill is None:
            return None
        return RULESETS[self.sc.ruleset].aliases.get(it.skill, it.skill)

    def answer_for(self, st: Step, d: Decision) -> list[str] | None:
        """The picks that step ``st`` gives decision ``d``, or None if it does not answer it."""
        it, pr = st.parsed, self.progress
        if d.seat != st.seat:
            return None
        k = it.kind
        if k == "pass":
            return [] if d.declinable else None
        if k == "end":
            return ["end"] if d.kind == "play" else None
        if k == "discard":
            return self.card_opts(it.cards, d) if d.kind in ("discard", "cards") else None
        if k == "choose":
            return self.choose(it, d)
        if d.kind == "targets" and pr.started:
            return self.targets(it, d)
        if d.kind == "cards" and pr.started and not pr.cards_done:
            pr.cards_done = True
            return self.card_opts(it.cards, d)
        skill = self.skill_name(it)
        if d.kind == "confirm" and k == "skill" and d.info.get("skill") == skill:
            return ["yes"]
        if d.kind == "cards" and k == "skill" and d.info.get("skill") == skill:
            pr.cards_done = True
            return self.card_opts(it.cards, d)
        if d.kind in ("play", "respond") and not pr.started:
            if k == "skill" and it.skill == "重铸" and len(it.cards) == 1:
                rk = f"recast:{self.cid(it.cards[0])}"
                return [rk] if rk in d.options else None
            if k == "skill":
                key = f"skill:{skill}"
                return [key] if key in d.options else None
            if it.as_name is None and len(it.cards) == 1:
                ck = f"card:{self.cid(it.cards[0])}"
                rk = f"recast:{self.cid(it.cards[0])}"
                if not it.targets and rk in d.options:
                    return [rk]  # a targeted card used with no targets: 重铸
                return [ck] if ck in d.options else None
            opt = self.skill_for(it, d)
            return [opt] if opt else None
        if d.kind in ("choose", "pick_card") and pr.started and it.targets:
            return self.targets(it, d)
        return None

    def targets(self, it: Intent, d: Decision) -> list[str] | None:
        pr = self.progress
        rest = list(it.targets[pr.targets_done :])
        if not rest:
            return None
        if len(rest) > d.max and not d.info.get("two_step"):
            return None  # more targets than the card may have: the engine rejects the intent
        take = rest[: d.max]
        keys = [f"seat:{t}" for t in take]
        if not all(k in d.options for k in keys):
            return None
        pr.targets_done += len(take)
        return keys

    def choose(self, it: Intent, d: Decision) -> list[str] | None:
        keys: list[str] = []
        for w in it.words:
            if w in ("S", "H", "C", "D"):
                keys.append(f"suit:{w}")
            else:
                keys.append(w if w in d.options else f"general:{w}")
        keys += [f"card:{self.cid(r)}" for r in it.cards]
        keys += [f"seat:{t}" for t in it.targets]
        return keys if keys and all(k in d.options for k in keys) else None

    # --- the loop -------------------------------------------------------------------------------
    def rejected(self, reason: str) -> None:
        """The engine rejected the current step: fine if ``expect_error`` names it."""
        ee = self.sc.expect_error
        st = self.sc.script[self.step]
        if ee is None or ee.step != self.step:
            raise ScenarioFailed(
                f"step {self.step} ({st.seat}: {st.intent}) was rejected: {reason}"
            )
        if ee.contains and ee.contains not in reason:
            raise ScenarioFailed(
                f"step {self.step} was rejected, but the reason {reason!r} lacks {ee.contains!r}"
            )

    def check_fixed_targets(self, st: Step) -> None:
        """A use that names targets must have had them (a fixed-target card ignores none)."""
        it = st.parsed
        if it.kind != "use" or not it.targets:
            return
        for e in reversed(self.events):
            if isinstance(e, CardUsed) and e.user == st.seat:
                named = sorted(it.targets)
                if sorted(e.targets) != named and not self.progress.targets_done:
                    self.rejected(f"{st.intent!r}: the card's targets are fixed ({e.targets})")
                    raise _Stop
                return

    def offered_but_absent(self, st: Step, d: Decision) -> bool:
        """Whether ``d`` is where step ``st`` had to happen but its card/target is not legal."""
        if d.seat != st.seat:
            return False
        k = st.parsed.kind
        if self.progress.started:
            return d.kind in ("targets", "cards") and k in ("use", "play", "skill")
        ee = self.sc.expect_error
        if ee is None or ee.step != self.step:
            return False  # rule 3: a decision the step does not answer is declined
        return (
            k in ("use", "play")
            and d.kind in ("play", "respond")
            or (k == "skill" and d.kind == "play")
        )

    def submit(self, d: Decision, picks: list[str]) -> None:
        self.events += api.submit(self.g, Answer(decision=d.id, seat=d.seat, picks=picks))

    def run(self) -> None:
        g, script = self.g, self.sc.script
        expect_err = self.sc.expect_error
        self.events += api.advance(g)
        for _ in range(MAX_DECISIONS):
            d = g.pending
            if g.over or d is None:
                break
            picks = None
            if self.step < len(script):
                st = script[self.step]
                picks = self.answer_for(st, d)
                if picks is None and self.progress.started and self.offered_but_absent(st, d):
                    self.rejected(
                        f"{st.intent!r} is not among the legal options of {describe(g, d)}"
                    )
                    return
                if picks is None and self.progress.started:
                    self.check_fixed_targets(st)
                    self.step += 1  # the step's intent is used up; the next may answer d
                    self.progress = Progress()
                    if self.step < len(script):
                        picks = self.answer_for(script[self.step], d)
            if picks is not None:
                self.progress.started = True
                try:
                    self.submit(d, picks)
                except IllegalAnswer as err:
                    self.rejected(err.reason)
                    return
                if script[self.step].parsed.kind in SINGLE_DECISION:
                    self.step += 1
                    self.progress = Progress()
                continue
            if self.step < len(script) and self.offered_but_absent(script[self.step], d):
                self.rejected(
                    f"{script[self.step].intent!r} is not among the legal options "
                    f"of {describe(g, d)}"
                )
                return
            if not d.declinable and len(d.options) == d.min:
                self.submit(d, list(d.options))  # a forced decision with one possible answer
                continue
            if d.declinable and d.kind != "play":
                self.submit(d, [])
                continue
            if self.step >= len(script):
                break  # script exhausted: stop at the first decision we may not decline
            st = script[self.step]
            if expect_err is not None and expect_err.step == self.step:
                return  # the engine never offers what the step says: it is rejected
            raise ScenarioFailed(
                f"waiting for {describe(g, d)}; next step {self.step}: {st.seat}: {st.intent}"
            )
        else:
            raise ScenarioFailed(f"no end after {MAX_DECISIONS} decisions")
        if self.progress.started:
            self.check_fixed_targets(script[self.step])
            self.step += 1
        if expect_err is not None:
            raise ScenarioFailed(
                f"step {expect_err.step} was expected to be rejected, but it was accepted"
            )
        if self.step < len(script):
            st = script[self.step]
            raise ScenarioFailed(
                f"the run stopped before step {self.step} "
                f"({st.seat}: {st.intent})"
                + (f"; waiting for {describe(g, g.pending)}" if g.pending else "; the game ended")
            )
        if self.sc.expect is not None:
            check_expect(self.sc, self.g, self.refs, self.events)


def run_scenario(sc: Scenario) -> None:
    """Run one scenario; raise ScenarioFailed (or TableError) if it does not hold."""
    with contextlib.suppress(_Stop):
        Runner(sc).run()


def run_paths(paths: Iterable[str | Path], out: Any = None) -> tuple[int, int]:
    """Run every scenario under ``paths``; print a line each and a closing count."""
    out = out or sys.stdout
    passed = failed = 0
    for path, sc in load_paths(paths):
        if isinstance(sc, ScenarioFormatError):
            failed += 1
            print(f"FAIL {path}: {sc}", file=out)
            continue
        try:
            run_scenario(sc)
        except (ScenarioFailed, TableError) as err:
            failed += 1
            print(f"FAIL {sc.name} [{path}]: {err}", file=out)
            continue
        passed += 1
        print(f"PASS {sc.name}", file=out)
    print(f"{passed} passed, {failed} failed", file=out)
    return passed, failed


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena scenario` options."""
    p.add_argument("action", choices=["run"], help="run: play each scenario and check it")
    p.add_argument("paths", nargs="+", help="scenario files and folders of them")


def main(args: argparse.Namespace) -> int:
    """`arena scenario run PATH...`: a line per scenario; exit 1 if any failed."""
    _, failed = run_paths(args.paths)
    return 1 if failed else 0


__all__ = ["run_scenario", "run_paths", "main", "ScenarioFailed", "Runner", "msgspec", "Game"]
