"""What the engine asks, not only what happens: a scenario's checks see the end state and the
events, but not the decisions along the way (who was asked, about what, on whose behalf). Each
test plays a scenario file through the real runner, records every decision it met, and checks
them (#22 follow-up: 决斗's ``info.source``, a timing point read through the wrong frame)."""

from __future__ import annotations

from pathlib import Path

from services.rules import api
from services.rules.api import DECISION_KINDS
from services.rules.core.state import Decision
from services.rules.scenario.loader import load_file, load_text
from services.rules.scenario.model import Scenario
from services.rules.scenario.runner import Runner

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


class Recorder(Runner):
    """The scenario runner, keeping every decision it answers or declines."""

    def __init__(self, sc: Scenario) -> None:
        super().__init__(sc)
        self.asked: list[Decision] = []

    def submit(self, d: Decision, picks: list[str]) -> None:
        self.asked.append(d)
        super().submit(d, picks)


def asked(sc: Scenario) -> list[Decision]:
    r = Recorder(sc)
    r.run()  # raises ScenarioFailed if the scenario itself does not hold
    return r.asked


def offered(sc: Scenario) -> list[str]:
    """The skills offered (``confirm``) while the scenario runs."""
    return [str(d.info.get("skill")) for d in asked(sc) if d.kind == "confirm"]


def duel_demands(decisions: list[Decision]) -> list[tuple[int, int]]:
    """(asked seat, ``info.source``) of each 杀 demanded in a 决斗."""
    return [
        (d.seat, d.info["source"])
        for d in decisions
        if d.kind == "respond" and d.info.get("reason") == "决斗"
    ]


def test_duel_demand_names_the_opponent_every_exchange() -> None:
    """Seat 1 is asked for 杀 owed to seat 0, then seat 0 owed to seat 1, and so on (REFERENCE
    决斗: "the first who does not takes 1 damage from the other")."""
    sc = load_file(SCENARIOS / "standard/tricks/juedou_alternates_until_one_fails.yaml")
    # seat 0, with no 杀 left, is not asked a fourth time (a seat with no option never is)
    assert duel_demands(asked(sc)) == [(1, 0), (0, 1), (1, 0)]


WUSHUANG_DUEL = """\
name: 无双 — 吕布's 决斗, two exchanges
ruleset: standard
seats:
  - {general: 吕布, role: lord, hand: [决斗 SA, 杀 C2]}
  - {general: vanilla, role: rebel, hand: [杀 S7, 杀 S8, 杀 S9]}
  - {general: vanilla, role: loyalist}
  - {general: vanilla, role: renegade}
turn: {seat: 0, phase: play}
script:
  - 0: use 决斗 SA -> 1
  - 1: play 杀 S7
  - 1: play 杀 S8
  - 0: play 杀 C2
  - 1: play 杀 S9
expect:
  seats:
    0: {hp: 5}
    1: {hp: 3, hand: []}
  events:
    - {type: damaged, source: 0, target: 1, amount: 1}
"""


def test_duel_demand_with_wushuang_names_the_opponent() -> None:
    """Against 吕布's 无双 the target owes two 杀 each time, both to 吕布; 吕布 owes one to it; the
    target, with one 杀 left, owes 吕布 again (and is not asked for a second it lacks)."""
    sc = load_text(WUSHUANG_DUEL, "wushuang.yaml")
    assert duel_demands(asked(sc)) == [(1, 0), (1, 0), (0, 1), (1, 0)]


KEJI_LAST_SLASH = """\
name: 克己 — 吕蒙's last hand card is the 杀 he uses; 陆逊 (连营) at the table
ruleset: standard
seats:
  - {general: 吕蒙, role: rebel, hand: [杀 S7]}
  - {general: 陆逊, role: lord}
  - {general: vanilla, role: loyalist}
  - {general: vanilla, role: renegade}
turn: {seat: 0, phase: play}
script:
  - 0: use 杀 S7 -> 1
  - 0: end
expect:
  seats:
    1: {hp: 3}
"""


def test_keji_not_offered_after_a_last_card_slash() -> None:
    """The 杀 empties 吕蒙's hand, which fires ``hand_emptied`` (陆逊 listens) before the on-use
    timing point; 克己's bookkeeping must still see the 杀, so 克己 is not offered before his
    discard phase. (The runner declines an offered 克己, so only the decisions show this.)"""
    assert "克己" not in offered(load_text(KEJI_LAST_SLASH, "keji.yaml"))
    # the check can fail: without the 杀, 克己 is offered
    quiet = KEJI_LAST_SLASH.replace("  - 0: use 杀 S7 -> 1\n", "").replace("{hp: 3}", "{hp: 4}")
    assert "克己" in offered(load_text(quiet, "keji.yaml"))


def test_every_decision_of_every_scenario_is_of_a_named_kind() -> None:
    """`api.DECISION_KINDS` (what `expect.waiting.kind` is checked against, what clients draw)
    holds every kind the engine asks: the scenario files touch every card and skill, and a
    dealt game starts with a draft."""
    kinds: set[str] = set()
    for path in sorted(SCENARIOS.rglob("*.yaml")):
        sc = load_file(path)
        if sc.expect_error is None:
            kinds |= {d.kind for d in asked(sc)}
    assert kinds <= DECISION_KINDS, kinds - DECISION_KINDS
    g = api.new_game("jinyu", 5, 1)  # a scenario's table is dealt: drafts happen only here
    api.advance(g)
    assert g.pending is not None and g.pending.kind == "draft"
    assert kinds | {"draft"} == DECISION_KINDS, DECISION_KINDS - kinds  # none never asked
