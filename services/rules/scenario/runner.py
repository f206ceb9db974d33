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
from ..core.skills import HOOK_SETS, SKILLS
from ..core.state import Answer, Decision, Game
from .checks import ScenarioFailed, check_expect
from .loader import load_paths
from .model import CardRef, Intent, Scenario, ScenarioFormatError, Step
from .table import RECAST, TableError, build, describe

MAX_DECISIONS = 2000
SINGLE_DECISION = ("choose", "discard", "pass", "end")


class _Stop(Exception):
    """Ends the run early after an expected rejection."""


class Progress:
    """How much of the current step's intent has been used up by earlier decisions."""

    def __init__(self) -> None:
        self.started = False
        self.cards_done = False
        self.targets_done = 0


class Runner:
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

    # --- translating intents ------------------------------------------------------------------
    def keys(self, refs: Iterable[CardRef]) -> list[str]:
        """The option keys of the scenario's cards (``build`` checked that each exists)."""
        return [f"card:{self.refs[r]}" for r in refs]

    @staticmethod
    def legal(keys: list[str], d: Decision) -> list[str] | None:
        """``keys`` if the decision offers every one of them."""
        return keys if keys and all(k in d.options for k in keys) else None

    def skill_for(self, intent: Intent, d: Decision) -> str | None:
        """The option of the skill that turns the intent's cards into ``as NAME``: one that
        converts into NAME, else the only offered provider that names no card (丈八蛇矛)."""
        aliases = RULESETS[self.sc.ruleset].aliases
        want = aliases.get(intent.as_name or "", intent.as_name or "")
        offered = [o[6:] for o in d.options if o.startswith("skill:")]
        for name in offered:
            sk = SKILLS.get(name)
            names = getattr(sk, "names", None)  # a Conversion names what it makes for a need
            makes = names(want) if names is not None else [getattr(sk, "converts", "")]
            if name == intent.skill or want in makes:
                return f"skill:{name}"
        plain = [
            n
            for n in offered
            if n in HOOK_SETS["provides"] and not getattr(SKILLS[n], "converts", "")
        ]
        return f"skill:{plain[0]}" if len(plain) == 1 else None

    def skill_name(self, it: Intent) -> str | None:
        """The engine's name of the intent's skill (an equipment effect may be printed under the
        ruleset's card name, e.g. seed 000's 护官符 for 八卦阵)."""
        if it.skill is None:
            return None
        return RULESETS[self.sc.ruleset].aliases.get(it.skill, it.skill)

    def choose_keys(self, it: Intent, d: Decision) -> list[str]:
        """The option keys a `choose` intent names."""
        keys: list[str] = []
        for w in it.words:
            if w in ("S", "H", "C", "D"):
                keys.append(f"suit:{w}")
            else:
                keys.append(w if w in d.options else f"general:{w}")
        return keys + self.keys(it.cards) + [f"seat:{t}" for t in it.targets]

    def rest_targets(self, it: Intent) -> list[str]:
        """The step's targets not yet given, as option keys."""
        return [f"seat:{t}" for t in it.targets[self.progress.targets_done :]]

    def targets(self, it: Intent, d: Decision) -> list[str] | None:
        rest = self.rest_targets(it)
        if not rest or (len(rest) > d.max and not d.info.get("two_step")):
            return None  # none left, or more than the card may have (the engine rejects those)
        return self.legal(rest[: d.max], d)

    def answer_for(self, st: Step, d: Decision) -> list[str] | None:
        """The legal picks that step ``st`` gives decision ``d``, or None if it does not answer
        it. A started step answers only the decisions that continue it (its cards, its targets):
        one step answers one offer, so a skill offered again needs a step of its own."""
        it, pr = st.parsed, self.progress
        if d.seat != st.seat:
            return None
        k = it.kind
        if k == "pass":
            return [] if d.declinable else None
        if k == "end":
            return ["end"] if d.kind == "play" else None
        if k == "discard":
            return self.legal(self.keys(it.cards), d) if d.kind in ("discard", "cards") else None
        if k == "choose":
            return self.legal(self.choose_keys(it, d), d)
        if pr.started:
            if d.kind == "targets" or (d.kind in ("choose", "pick_card") and it.targets):
                return self.targets(it, d)
            if d.kind == "cards" and not pr.cards_done:
                return self.legal(self.keys(it.cards), d)
            return None
        skill = self.skill_name(it)
        if k == "skill" and d.info.get("skill") == skill:
            if d.kind == "confirm":
                return ["yes"]
            if d.kind == "cards":
                return self.legal(self.keys(it.cards), d)
        if d.kind not in ("play", "respond"):
            return None
        if k == "skill":
            if skill == RECAST and len(it.cards) == 1:
                return self.legal([f"recast:{self.refs[it.cards[0]]}"], d)
            return self.legal([f"skill:{skill}"], d)
        if it.as_name is None and len(it.cards) == 1:
            cid = self.refs[it.cards[0]]
            if not it.targets and f"recast:{cid}" in d.options:
                return [f"recast:{cid}"]  # a targeted card used with no targets: 重铸
            return self.legal([f"card:{cid}"], d)
        opt = self.skill_for(it, d)
        return [opt] if opt else None

    def continues(self, st: Step, d: Decision) -> bool:
        """Whether ``d`` continues the started step ``st`` (its cards or targets are asked)."""
        it, pr = st.parsed, self.progress
        if d.seat != st.seat or it.kind not in ("use", "play", "skill"):
            return False
        if d.kind == "targets":
            return bool(self.rest_targets(it))
        return d.kind == "cards" and not pr.cards_done and bool(it.cards)

    def could_answer(self, st: Step, d: Decision) -> bool:
        """Whether ``d`` is where the not yet started step ``st`` is to be tried: a decision of
        its seat of the kind its intent answers (the demanded card, for a respond)."""
        it = st.parsed
        if d.seat != st.seat:
            return False
        k = it.kind
        if k == "pass":
            return True
        if k == "end":
            return d.kind == "play"
        if k == "discard":
            return d.kind in ("discard", "cards")
        if k == "choose":
            return d.kind in ("choose", "pick_card", "draft")
        if k == "skill":
            name = self.skill_name(it)
            provider = d.kind == "respond" and name in HOOK_SETS["provides"]
            return d.kind == "play" or provider or d.info.get("skill") == name
        # the demanded card, or 酒 for a dying seat's 桃 (its self-rescue, §2.1)
        aliases = RULESETS[self.sc.ruleset].aliases
        names = {self.g.cards[self.refs[r]].name for r in it.cards}
        if it.as_name is not None:
            names = {aliases.get(it.as_name, it.as_name)}
        need = d.info.get("need")
        demanded = d.kind == "respond" and (need in names or (need == "桃" and "酒" in names))
        return demanded or (k == "use" and d.kind == "play")

    def raw_picks(self, st: Step, d: Decision) -> list[str]:
        """What the step means at ``d``, legal or not (for the engine to accept or refuse)."""
        it, pr = st.parsed, self.progress
        if it.kind == "pass":
            return []
        if it.kind == "end":
            return ["end"]
        if it.kind == "choose":
            return self.choose_keys(it, d)
        if pr.started and d.kind != "cards":
            return self.rest_targets(it)
        if it.kind == "discard" or d.kind == "cards":
            return self.keys(it.cards)
        if it.kind == "skill":
            return [f"skill:{self.skill_name(it)}"]
        if it.as_name is None:
            return self.keys(it.cards[:1])
        return [f"skill:{self.converter(st.seat, it.as_name)}"]

    def converter(self, seat: int, name: str) -> str:
        """The seat's skill that makes cards into ``name`` (the conversion the step asks for)."""
        aliases = RULESETS[self.sc.ruleset].aliases
        want = aliases.get(name, name)
        p = self.g.players[seat]
        for s in [*p.skills, *(self.g.cards[c].name for c in p.equip.values())]:
            if getattr(SKILLS.get(s), "converts", None) in (name, want):
                return s
        return f"as {name}"  # no skill of the seat converts: the engine refuses the conversion

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
        pr.targets_done += sum(1 for p in picks if p.startswith("seat:"))
        if st.parsed.kind in SINGLE_DECISION:
            self.next_step()

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
    """`arena scenario run PATH...`: a line per scenario; exit 1 if any failed."""
    _, failed = run_paths(args.paths)
    return 1 if failed else 0


__all__ = ["run_scenario", "run_paths", "main", "ScenarioFailed", "Runner", "msgspec", "Game"]
