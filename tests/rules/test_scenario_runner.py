"""The scenario runner cannot pass by accident (issue #22, SCENARIOS.md): each test here is a
scenario that a weaker runner passed while proving nothing, or could not express at all."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from services.cli import main
from services.rules.scenario.checks import ScenarioFailed
from services.rules.scenario.loader import load_text
from services.rules.scenario.model import ScenarioFormatError
from services.rules.scenario.runner import run_scenario
from services.rules.scenario.table import TableError, build

TABLE = """\
name: t
ruleset: standard
seats:
  - {general: vanilla, role: lord, hand: [杀 S7, 闪 D2]}
  - {general: vanilla, role: rebel, hand: [闪 D3]}
  - {general: vanilla, role: loyalist}
  - {general: vanilla, role: renegade}
turn: {seat: 0, phase: play}
"""


def run(text: str) -> None:
    run_scenario(load_text(textwrap.dedent(text), "t.yaml"))


def fails(text: str, *words: str) -> str:
    """Run a scenario that must not hold; its report names each of ``words``."""
    with pytest.raises((ScenarioFailed, TableError)) as info:
        run(text)
    for word in words:
        assert word in str(info.value), str(info.value)
    return str(info.value)


# --- 1. cards outside the deck -----------------------------------------------------------------


def test_a_card_outside_the_deck_is_created() -> None:
    """The standard deck has no 杀 ♠5; the scenario makes one, of the same kind as the deck's 杀."""
    run(
        TABLE.replace("hand: [杀 S7, 闪 D2]", "hand: [杀 S5]")
        + "script:\n  - 0: use 杀 S5 -> 1\nexpect:\n  seats: {1: {hp: 3}}\n"
        + "  discard_has: [杀 S5]\n"
    )


def test_fill_never_adds_a_card_outside_the_deck() -> None:
    sc = load_text(TABLE.replace("杀 S7", "杀 S5") + "fill: true\n", "t.yaml")
    g, refs = build(sc)
    assert len(g.cards) == 160 + 1  # the whole deck, and the one 杀 ♠5 made for the scenario
    assert len(g.draw) == 160 - 2  # the deck less the 闪 ♦2 and 闪 ♦3 placed in hands
    assert [c.name for c in g.cards].count("杀") == 31  # 30 in the deck, 1 made


def test_a_second_copy_beyond_the_deck_is_created() -> None:
    """The deck has one 杀 ♠7: `#2` makes a second."""
    g, refs = build(load_text(TABLE.replace("杀 S7, 闪 D2", '杀 S7, "杀 S7 #2"'), "t.yaml"))
    assert sorted(g.cards[c].name for c in g.players[0].hand) == ["杀", "杀"]


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("hand: [闪 D3]", "hand: [杀杀 S5]", "seats[1].hand[0]"),
        ("turn:", "deck: [闪 D4, 神杀 S5]\nturn:", "deck[1]"),
        ("turn:", "discard: [火杀 H4]\noptions: {maneuvering: false}\nturn:", "discard[0]"),
    ],
)
def test_a_card_name_the_ruleset_lacks_names_the_field(old: str, new: str, field: str) -> None:
    with pytest.raises(TableError) as info:
        build(load_text(TABLE.replace(old, new, 1), "t.yaml"))
    assert str(info.value).startswith(f"{field}: "), str(info.value)
    assert "is not a card of standard" in str(info.value)


# --- 2. one step answers one offer ---------------------------------------------------------------

LUOSHEN = """\
name: 洛神, yes then no
ruleset: standard
seats:
  - {general: 甄姬, role: lord}
  - {general: vanilla, role: rebel}
  - {general: vanilla, role: loyalist}
  - {general: vanilla, role: renegade}
deck: [杀 S7, 杀 C3, 闪 D2, 闪 D3, 闪 D4]
turn: {seat: 0, phase: start}
script:
  - 0: skill 洛神
expect:
  turn: {seat: 0, phase: play}
  seats: {0: {hand: [杀 S7, 杀 C3, 闪 D2]}}
"""


def test_skill_answers_one_offer_so_yes_then_no_can_be_scripted() -> None:
    """One `skill 洛神`: the first judgement (杀 ♠7, black, obtained), then no to "again"; the
    draw phase draws 杀 ♣3 and 闪 ♦2. A runner that says yes to every offer judges 杀 ♣3 too."""
    run(LUOSHEN)


def test_two_skill_steps_answer_two_offers() -> None:
    run(
        LUOSHEN.replace("  - 0: skill 洛神\n", "  - 0: skill 洛神\n  - 0: skill 洛神\n").replace(
            "[杀 S7, 杀 C3, 闪 D2]", "[杀 S7, 杀 C3, 闪 D2, 闪 D3]"
        )
    )


# --- 3. expect_error must really be tried --------------------------------------------------------


def test_a_step_for_a_seat_never_asked_is_not_a_refusal() -> None:
    """Seat 2 holds nothing and is never asked: its step was never tried."""
    fails(
        TABLE + "script:\n  - 2: use 闪 D2\nexpect_error: {step: 0}\n",
        "never tried",
    )


def test_a_step_after_the_script_stops_is_not_a_refusal() -> None:
    """The 杀 is answered by seat 1 with its 闪; seat 2's step after it is never asked."""
    fails(
        TABLE + "script:\n  - 0: use 杀 S7 -> 1\n  - 2: use 闪 D2\nexpect_error: {step: 1}\n",
        "never tried",
    )


@pytest.mark.parametrize(
    ("step", "field"),
    [
        ("0: skill 仁德德 with 杀 S7 -> 1", "script[0]: '仁德德' is not a skill"),
        ("0: use 杀 S7 as 杀杀 -> 1", "script[0]: '杀杀' is not a card of standard"),
        ("0: use 杀 S9 -> 1", "script[0]: 杀 S9 is not a card the scenario created"),
    ],
)
def test_a_misspelt_name_is_an_error_not_a_refusal(step: str, field: str) -> None:
    fails(TABLE + f"script:\n  - {step}\nexpect_error: {{step: 0}}\n", field)


def test_the_expected_word_is_matched_against_the_engines_reason_only() -> None:
    """闪 cannot be used in the play phase; the runner's own description of the decision
    (which says `info`) is not the engine's reason."""
    base = TABLE + "script:\n  - 0: use 闪 D2\nexpect_error: {step: 0%s}\n"
    run(base % "")
    fails(base % ", contains: info", "lacks 'info'")


def test_an_accepted_step_fails_an_expected_refusal() -> None:
    fails(TABLE + "script:\n  - 0: use 杀 S7 -> 1\nexpect_error: {step: 0}\n", "accepted")


def test_the_refusal_comes_from_the_engine_at_the_targets() -> None:
    """Seat 2 is at distance 2: the 杀 is offered (seat 1 is in range), its target is refused."""
    run(TABLE + "script:\n  - 0: use 杀 S7 -> 2\nexpect_error: {step: 0}\n")


def test_an_earlier_refusal_fails() -> None:
    fails(
        TABLE + "script:\n  - 0: use 杀 S7 -> 2\n  - 0: end\nexpect_error: {step: 1}\n",
        "step 0",
        "was rejected",
    )


# --- 5. strict checks ----------------------------------------------------------------------------


def test_discard_lacks_a_card_never_created_is_an_error() -> None:
    with pytest.raises(TableError, match=r"expect\.discard_lacks: 杀 S8 is not a card"):
        run(TABLE + "script:\n  - 0: end\nexpect:\n  discard_lacks: [杀 S8]\n")


@pytest.mark.parametrize("area", ["hand", "equip", "judge"])
def test_seat_checks_of_cards_never_created_are_errors(area: str) -> None:
    with pytest.raises(TableError, match=rf"expect\.seats\.0\.{area}: 杀 S8 is not a card"):
        run(TABLE + f"script:\n  - 0: end\nexpect:\n  seats: {{0: {{{area}: [杀 S8]}}}}\n")


JUDGE = """\
name: judge order
ruleset: standard
seats:
  - {general: vanilla, role: lord, judge: [乐不思蜀 H6, 兵粮寸断 S10]}
  - {general: vanilla, role: rebel}
  - {general: vanilla, role: loyalist}
  - {general: vanilla, role: renegade}
turn: {seat: 1, phase: play}
expect:
  seats: {0: {judge: %s}}
"""


def test_judge_checks_order() -> None:
    run(JUDGE % "[乐不思蜀 H6, 兵粮寸断 S10]")
    fails(JUDGE % "[兵粮寸断 S10, 乐不思蜀 H6]", "seat 0 judge")


@pytest.mark.parametrize(
    ("event", "field"),
    [
        ("{type: damage_dealt, target: 1}", "expect.events[0].type"),
        ("{type: damaged, victim: 1}", "expect.events[0].victim"),
    ],
)
def test_unknown_event_types_and_fields_are_load_errors(event: str, field: str) -> None:
    with pytest.raises(ScenarioFormatError) as info:
        load_text(TABLE + f"expect:\n  events: [{event}]\n", "t.yaml")
    assert info.value.path == field


# --- 6. options applied to the table -------------------------------------------------------------

GENDERS = """\
name: 离间 on 尤三姐, male in the source general
ruleset: honglou
options: {genders: source}
seats:
  - {general: 香菱, role: lord, hand: [杀 S7]}
  - {general: 焦大, role: rebel}
  - {general: 尤三姐, role: loyalist}
  - {general: vanilla, role: renegade}
turn: {seat: 0, phase: play}
script:
  - 0: skill 离间 with 杀 S7 -> 1, 2
expect:
  events: [{type: card_used, user: 1, name: 决斗, targets: [2]}]
"""


def test_an_option_that_changes_a_general_applies_to_the_seats() -> None:
    """With `genders: source`, 尤三姐 is male (夏侯惇's gender): 离间 may choose her."""
    run(GENDERS)
    fails(GENDERS.replace("options: {genders: source}\n", ""), "was rejected")


def test_the_example_in_the_design_document_holds() -> None:
    import re
    from pathlib import Path

    doc = Path("/work/shared/design/SCENARIOS.md")
    if not doc.exists():
        pytest.skip("shared design documents not mounted")
    block = re.search(r"```yaml\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert block is not None
    run(block.group(1))


# --- a started use the script forgot to aim ----------------------------------------------------


def test_a_use_without_its_targets_fails_instead_of_being_declined_away() -> None:
    """`use 杀 S7` names no target: the runner's default "no" to the targets decision would
    cancel the use, and a check that the 杀 is still in hand would pass proving nothing."""
    fails(
        TABLE + "script:\n  - 0: use 杀 S7\nexpect:\n  seats: {0: {hand: [杀 S7, 闪 D2]}}\n",
        "step 0",
        "names no targets",
    )


# --- load-time checks against the ruleset --------------------------------------------------------


def test_a_role_the_ruleset_lacks_is_a_load_error() -> None:
    with pytest.raises(ScenarioFormatError, match=r"seats\[1\]\.role.*the roles of standard"):
        load_text(TABLE.replace("role: rebel", "role: pantu"), "t.yaml")
    load_text(  # extended's 叛徒 is a role a seat can hold there
        TABLE.replace("standard", "extended").replace("role: rebel", "role: pantu"), "t.yaml"
    )


def test_an_unknown_waiting_kind_is_a_load_error() -> None:
    with pytest.raises(ScenarioFormatError, match=r"expect\.waiting\.kind.*pick_card"):
        load_text(TABLE + "expect:\n  waiting: {seat: 0, kind: plya}\n", "t.yaml")


def test_a_folder_without_scenarios_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scenario", "run", str(tmp_path)]) == 2
    assert "no scenario files" in capsys.readouterr().err
