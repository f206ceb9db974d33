"""Play a scenario through the engine exactly as SCENARIOS.md "How the runner plays the script"
says, then check its expectations. ``arena scenario run PATH...`` prints ``PASS``/``FAIL`` lines
and ``N passed, N failed``. How a step's intent becomes option keys: ``answers.py``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import api
from ..core.engine import IllegalAnswer
from ..core.events import CardUsed, Event
from ..core.keys import SeatPick, parse
from ..core.state import Answer, Decision
from .answers import Answers, Progress
from .checks import ScenarioFailed, check_expect
from .loader import load_paths
from .model import Scenario, ScenarioFormatError, Step
from .table import TableError, build, describe

MAX_DECISIONS = 2000
SINGLE_DECISION = ("choose", "discard", "pass", "end")


class _Stop(Exception):
    """Ends the run early after an expected rejection."""


class Runner(Answers):
    """Plays one scenario."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.g, self.refs = build(sc)
        self.g.auto_forced = False  # the runner answers forced single-answer decisions itself
        self.events: list[Event] = []
        self.step = 0
        self.progress = Progress()
        ee = sc.expect_error
        self.expected = ee.step if ee is not None else -1  # the step the engine must refuse
        self.tried = False  # whether that step was ever put to the engine

    # --- the loop -------------------------------------------------------------------------------
    def next_step(self) -> None:
        self.step += 1
        self.progress = Progress()

    def rejected(self, reason: str) -> None:
        """The engine refused the current step: the run ends here if ``expect_error`` names it
        (and its reason has the expected word), else the scenario fails."""
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
        raise _Stop

    def check_fixed_targets(self, st: Step) -> None:
        """A use that names targets must have had them (a fixed-target card ignores none)."""
        it = st.parsed
        if it.kind != "use" or not it.targets or self.progress.targets_done:
            return
        for e in reversed(self.events):
            if isinstance(e, CardUsed) and e.user == st.seat:
                if sorted(e.targets) != sorted(it.targets):
                    raise ScenarioFailed(
                        f"step {self.step} ({st.seat}: {st.intent}): the card's targets are "
                        f"fixed ({e.targets}); write the step without `->`"
                    )
                return

    def picks_for(self, d: Decision) -> list[str] | None:
        """What the script answers to ``d``, or None (the runner's defaults apply)."""
        script = self.sc.script
        if self.step >= len(script):
            return None
        st = script[self.step]
        picks = self.answer_for(st, d)
        if picks is None and self.progress.started:
            if self.continues(st, d):
                return self.raw_picks(st, d)  # the engine refuses them and says why
            if self.cancels_started_use(d):
                raise ScenarioFailed(
                    f"step {self.step} ({st.seat}: {st.intent}) names no targets, but its use "
                    f"asks for them ({describe(self.g, d)}): declining would cancel it; add `-> T`"
                )
            self.check_fixed_targets(st)
            self.next_step()  # the step's intent is used up; the next may answer d
            if self.step >= len(script):
                return None
            st = script[self.step]
            picks = self.answer_for(st, d)
        if picks is None and self.step == self.expected and self.could_answer(st, d):
            return self.raw_picks(st, d)  # the step to be refused is tried here
        return picks

    def submit(self, d: Decision, picks: list[str]) -> None:
        self.events += api.submit(self.g, Answer(decision=d.id, seat=d.seat, picks=picks))

    def play_step(self, d: Decision, picks: list[str]) -> None:
        """Put the current step's picks to the engine."""
        st, pr = self.sc.script[self.step], self.progress
        self.tried = self.tried or self.step == self.expected
        try:
            self.submit(d, picks)
        except IllegalAnswer as err:
            self.rejected(err.reason)
        pr.started = True
        if d.kind == "cards":
            pr.cards_done = True
        pr.targets_done += sum(1 for p in picks if isinstance(parse(p), SeatPick))
        if st.parsed.kind in SINGLE_DECISION:
            self.next_step()

    def cancels_started_use(self, d: Decision) -> bool:
        """Whether declining ``d`` would cancel the card or skill the current step started:
        it asks the targets of a use whose step names none (the runner's default "no" would
        turn `use 杀 C2` into "not used", and the scenario would pass proving nothing)."""
        if not self.progress.started or self.step >= len(self.sc.script):
            return False
        st = self.sc.script[self.step]
        return (
            d.kind == "targets"
            and d.seat == st.seat
            and st.parsed.kind in ("use", "play", "skill")
            and not st.parsed.targets
            and self.progress.targets_done == 0
        )

    def run(self) -> None:
        g, script = self.g, self.sc.script
        self.events += api.advance(g)
        for _ in range(MAX_DECISIONS):
            d = g.pending
            if g.over or d is None:
                break
            picks = self.picks_for(d)
            if picks is not None:
                self.play_step(d, picks)
            elif not d.declinable and len(d.options) == d.min:
                self.submit(d, list(d.options))  # a forced decision with one possible answer
            elif d.declinable and d.kind != "play":
                self.submit(d, [])
            elif self.step >= len(script):
                break  # script exhausted: stop at the first decision we may not decline
            else:
                st = script[self.step]
                never = " (the step to be refused was never tried)" * (self.step == self.expected)
                raise ScenarioFailed(
                    f"waiting for {describe(g, d)}; next step {self.step}: "
                    f"{st.seat}: {st.intent}{never}"
                )
        else:
            raise ScenarioFailed(f"no end after {MAX_DECISIONS} decisions")
        if self.progress.started:
            self.check_fixed_targets(script[self.step])
            self.next_step()
        if self.expected >= 0:
            st = script[self.expected]
            raise ScenarioFailed(
                f"step {self.expected} ({st.seat}: {st.intent}) was expected to be rejected, but "
                + (
                    "it was accepted"
                    if self.tried
                    else "it was never tried: its seat was never asked a decision it answers"
                )
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
    """`arena scenario run PATH...`: a line per scenario; exit 1 if any failed, 2 if the paths
    hold no scenario file (a mistyped folder proves nothing)."""
    passed, failed = run_paths(args.paths)
    if not passed and not failed:
        print(
            f"arena scenario: no scenario files (*.yaml) in {' '.join(args.paths)}", file=sys.stderr
        )
        return 2
    return 1 if failed else 0


__all__ = ["run_scenario", "run_paths", "main", "ScenarioFailed", "Runner"]
