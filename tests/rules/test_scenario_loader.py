"""The scenario loader: the SCENARIOS.md example parses, malformed files name their field, every
scenario file in the repository parses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services.rules.scenario.loader import load_paths, load_text, parse_intent
from services.rules.scenario.model import CardRef, Intent, Scenario, ScenarioFormatError

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
README = ROOT / "services" / "rules" / "README.md"

EXAMPLE = """\
name: 药 saves a lord hit by 闪电 (seed 000 worked example, 2 - 3 + 2 = 1)
ruleset: honglou
options: {}
seats:
  - {general: 贾珍, role: lord, hp: 2, hand: [药 H3], judge: [闪电 S5]}
  - {general: 林黛玉, role: loyalist, hand: [药 H4]}
  - {general: 史湘云, role: rebel}
  - {general: 香菱, role: renegade}
deck: [黑 S2, 杀 C3, 闪 D4]
turn: {seat: 0, phase: judge}
script:
  - 0: use 药 H3
  - 1: use 药 H4 -> 0
expect:
  seats:
    0: {hp: 1, alive: true, hand: [杀 C3, 闪 D4]}
  discard_has: [闪电 S5, 药 H3, 药 H4]
"""


def test_example_parses() -> None:
    s = load_text(EXAMPLE, "example.yaml")
    assert s.ruleset == "honglou" and len(s.seats) == 4
    assert s.seats[0].judge == (CardRef("闪电", "S", 5),)
    assert s.deck[0] == CardRef("黑", "S", 2)
    assert s.turn.seat == 0 and s.turn.phase == "judge"
    assert s.script[1].seat == 1
    assert s.script[1].parsed == Intent("use", cards=(CardRef("药", "H", 4),), targets=(0,))
    assert s.expect is not None and s.expect.seats[0].hp == 1
    assert CardRef("药", "H", 3) in s.expect.discard_has


def test_the_example_in_the_design_document_parses() -> None:
    doc = Path("/work/shared/design/SCENARIOS.md")
    if not doc.exists():
        pytest.skip("shared design documents not mounted")
    block = re.search(r"```yaml\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert block is not None
    assert isinstance(load_text(block.group(1), "SCENARIOS.md"), Scenario)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("pass", Intent("pass")),
        ("end", Intent("end")),
        ("use 杀 ♠7 -> 1", Intent("use", cards=(CardRef("杀", "S", 7),), targets=(1,))),
        (
            "use 闪 D2 + 桃 H3 as 杀 -> 1, 2",
            Intent("use", (CardRef("闪", "D", 2), CardRef("桃", "H", 3)), "杀", (1, 2)),
        ),
        ("play 杀 C10 as 杀", Intent("play", cards=(CardRef("杀", "C", 10),), as_name="杀")),
        ("skill 寒冰剑", Intent("skill", skill="寒冰剑")),
        (
            "skill 贯石斧 with 闪 D2, 桃 HQ",
            Intent("skill", cards=(CardRef("闪", "D", 2), CardRef("桃", "H", 12)), skill="贯石斧"),
        ),
        (
            "skill 流离 with 杀 SK -> 3",
            Intent("skill", (CardRef("杀", "S", 13),), targets=(3,), skill="流离"),
        ),
        ("choose ♥", Intent("choose", words=("H",))),
        ("choose seat 3", Intent("choose", targets=(3,))),
        ("choose 杀 S8 #2", Intent("choose", cards=(CardRef("杀", "S", 8, 2),))),
        ("choose discard", Intent("choose", words=("discard",))),
        (
            "discard 闪 D2, 杀 SA",
            Intent("discard", cards=(CardRef("闪", "D", 2), CardRef("杀", "S", 1))),
        ),
    ],
)
def test_intents(text: str, parsed: Intent) -> None:
    assert parse_intent(text) == parsed


def _mutate(old: str, new: str) -> str:
    assert old in EXAMPLE, old
    return EXAMPLE.replace(old, new, 1)


MALFORMED = [
    ("colour: red\n" + EXAMPLE, "colour", "one of"),
    (EXAMPLE.replace("name: 药 saves", "title: 药 saves"), "title", "one of"),
    (_mutate("ruleset: honglou\n", ""), "ruleset", "required"),
    (_mutate("role: lord, hp: 2", "role: lord, hp: 2, mana: 3"), "seats[0].mana", "one of"),
    (_mutate("hand: [药 H3]", "hand: [药 X3]"), "seats[0].hand[0]", "NAME SUIT RANK"),
    (_mutate("hand: [药 H3]", "hand: [药 H14]"), "seats[0].hand[0]", "rank A 2..10 J Q K"),
    (_mutate("hand: [药 H4]", "hand: 药 H4"), "seats[1].hand", "a list"),
    (_mutate("role: rebel", "role: traitor"), "seats[2].role", "lord"),
    (_mutate("general: 香菱, role: renegade", "role: renegade"), "seats[3].general", "general"),
    (_mutate("role: lord, hp: 2", "role: lord, hp: two"), "seats[0].hp", "an integer"),
    (_mutate("phase: judge", "phase: main"), "turn.phase", "start, judge, draw"),
    (_mutate("{seat: 0, phase: judge}", "{seat: 7, phase: judge}"), "turn.seat", "0..3"),
    (_mutate("deck: [黑 S2,", "deck: [黑 S2, 黑 S2,"), "deck[1]", "#2"),
    (_mutate("  - 0: use 药 H3\n", "  - use 药 H3\n"), "script[0]", "SEAT: INTENT"),
    (_mutate("  - 0: use 药 H3\n", "  - 0: eat 药 H3\n"), "script[0].0", "an intent"),
    (_mutate("  - 0: use 药 H3\n", "  - 9: use 药 H3\n"), "script[0]", "0..3"),
    (_mutate("use 药 H4 -> 0", "use 药 H4 -> zero"), "script[1].1", "seat numbers"),
    (_mutate("use 药 H4 -> 0", "use 药 H4 -> 5"), "script[1].1 (target)", "0..3"),
    (_mutate("    0: {hp: 1,", "    0: {hp: 1, mood: happy,"), "expect.seats.0.mood", "one of"),
    (_mutate("  discard_has:", "  discard_contains:"), "expect.discard_contains", "one of"),
    (
        _mutate("  discard_has: [闪电 S5,", "  discard_has: [闪电 S,"),
        "expect.discard_has[0]",
        "card",
    ),
    (EXAMPLE + "  turn: {seat: 0, phase: lunch}\n", "expect.turn.phase", "one of"),
    (EXAMPLE + "  winners: [rebels]\n", "expect.winners[0]", "one of"),
    (EXAMPLE + "  events: [{seat: 0}]\n", "expect.events[0].type", "event type"),
    (EXAMPLE + "expect_error: {step: 0}\n", "expect_error", "not both"),
    (_mutate("expect:\n", "expect_error: {step: 5}\nunused:\n"), "unused", "one of"),
    ("name: [unclosed\n", "line", "valid YAML"),
    ("- just a list\n", "", "a mapping"),
]


@pytest.mark.parametrize(("text", "field", "expected"), MALFORMED)
def test_malformed_files_name_the_field(text: str, field: str, expected: str) -> None:
    with pytest.raises(ScenarioFormatError) as info:
        load_text(text, "bad.yaml")
    err = info.value
    assert str(err).startswith("bad.yaml")
    assert err.path.startswith(field), (err.path, str(err))
    assert expected in err.expected, str(err)


def test_expect_error_step_must_exist() -> None:
    text = EXAMPLE.split("expect:\n")[0] + "expect_error: {step: 2, contains: range}\n"
    with pytest.raises(
        ScenarioFormatError, match=r"expect_error\.step: expected an integer in 0\.\.1"
    ):
        load_text(text, "bad.yaml")


def test_chengtian_takes_seat_numbers_and_no_roles() -> None:
    text = (
        "name: t\nruleset: chengtian\nseats: [{general: a}, {general: b}]\nexpect: {winners: [0]}\n"
    )
    assert load_text(text, "ok.yaml").expect.winners == (0,)  # type: ignore[union-attr]
    with pytest.raises(ScenarioFormatError, match=r"seats\[0\]\.role"):
        load_text(text.replace("{general: a}", "{general: a, role: lord}"), "bad.yaml")


def test_load_paths_reports_errors_without_raising(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "good.yaml").write_text(EXAMPLE, encoding="utf-8")
    (tmp_path / "a.yaml").write_text("name: x\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    results = load_paths([tmp_path])
    assert [p.name for p, _ in results] == ["a.yaml", "good.yaml"]
    assert isinstance(results[0][1], ScenarioFormatError)
    assert isinstance(results[1][1], Scenario)


ALL_FILES = sorted(SCENARIOS.rglob("*.yaml"))


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_every_scenario_file_parses(path: Path) -> None:
    ((_, result),) = load_paths([path])
    assert isinstance(result, Scenario), str(result)


def _documented_events() -> dict[str, set[str]]:
    """Event types and fields from the engine README's events table."""
    table: dict[str, set[str]] = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        row = re.match(r"^\| `([a-z_]+)`(?: / `([a-z_]+)`)? \| ([^|]+) \|$", line)
        if row:
            fields = {f.split(" ")[0] for f in row.group(3).split(", ")}
            for kind in filter(None, row.group(1, 2)):
                table[kind] = fields
    return table


def test_standard_scenarios_use_documented_event_names() -> None:
    if not README.exists():
        pytest.skip("engine README not present")
    documented = _documented_events()
    for path, result in load_paths([SCENARIOS / "standard"]):
        assert isinstance(result, Scenario), str(result)
        for pattern in result.expect.events if result.expect else ():
            assert pattern.type in documented, f"{path}: unknown event type {pattern.type}"
            unknown = set(pattern.fields) - documented[pattern.type]
            assert not unknown, f"{path}: {pattern.type} has no fields {unknown}"
