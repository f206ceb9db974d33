"""Every card and every skill of every ruleset has a scenario under its own name in its own
ruleset (issue #22 item 7).

What a ruleset owns (the rulesets in seed order; a later one owns what it adds or changes):

* cards: each card of its deck by the name it prints, unless an earlier ruleset's deck has a card
  printed the same with the same rules text (spec) — seed 000's 药 and 护官符 are honglou's own,
  seed 003's 乐不思蜀 (a ruleset-specific spec) is chengtian's; the 杀 of jinyu is standard's;
* skills: the skills of the generals it introduces (a general no earlier ruleset has), by the name
  its seat holds (seed 000's 好色, not 奸雄), and the skills its own package registers (rule and
  identity skills such as 金鱼, 谋攻, 君威; seed 003's 白鸽).

A card or skill is covered by a scenario file under ``tests/scenarios/RULESET/`` whose ruleset is
that one, whose ``name`` contains the printed name, and whose table has it: the card created (or
named by `as NAME`), or a seat whose general holds the skill (a rule skill: named in a step or in
the name, as no general holds it).
"""

from __future__ import annotations

from pathlib import Path

from services.rules import api
from services.rules.core.ruleset import RULESETS
from services.rules.core.skills import SKILLS
from services.rules.core.use import CARD_SPECS, RULESET_SPECS
from services.rules.scenario.loader import load_paths
from services.rules.scenario.model import Scenario

ROOT = Path(__file__).resolve().parents[1] / "scenarios"
ORDER = ("standard", "honglou", "jinyu", "chengtian", "extended")  # the seeds' order


def _spec(ruleset: str, name: str) -> object:
    return RULESET_SPECS.get(ruleset, {}).get(name) or CARD_SPECS.get(name)


def _deck(ruleset: str) -> set[tuple[str, str, int]]:
    """(printed name, engine name, id of its spec) of the ruleset's cards (default options)."""
    rs = RULESETS[ruleset]
    cards = rs.deck(api.resolve_options(ruleset, {}))
    return {(rs.display_name(c.name), c.name, id(_spec(ruleset, c.name))) for c in cards}


def owned() -> dict[str, dict[str, set[str]]]:
    """ruleset -> {"card": printed names, "skill": printed names} it owns."""
    out: dict[str, dict[str, set[str]]] = {}
    seen_cards: set[tuple[str, int]] = set()
    seen_generals: set[str] = set()
    for rid in ORDER:
        rs = RULESETS[rid]
        cards = {(p, s) for p, _, s in _deck(rid)}
        gens = {n: g for n, g in rs.generals().items() if n != "vanilla"}
        package = f"services.rules.rulesets.{rid}"
        skills = {s for n, g in gens.items() if n not in seen_generals for s in g.skills}
        skills |= {n for n, s in SKILLS.items() if type(s).__module__.startswith(package)}
        out[rid] = {"card": {p for p, s in cards - seen_cards}, "skill": skills}
        seen_cards |= cards
        seen_generals |= set(gens)
    return out


def _holds(sc: Scenario, kind: str, name: str) -> bool:
    """Whether the scenario's table has the card / skill ``name`` (printed)."""
    rs = RULESETS[sc.ruleset]
    engine = rs.aliases.get(name, name)
    if kind == "card":
        made = [r for s in sc.seats for r in (*s.hand, *s.equip, *s.judge)]
        made += [*sc.deck, *sc.discard]
        named = {rs.aliases.get(r.name, r.name) for r in made}
        named |= {rs.aliases.get(st.parsed.as_name or "", "") for st in sc.script}
        return engine in named
    gens = rs.generals(sc.options)
    for seat in sc.seats:
        gen = gens.get(seat.general) or gens.get(rs.aliases.get(seat.general, seat.general))
        if gen is not None and name in gen.skills:
            return True
    rule = type(SKILLS.get(name)).__module__.startswith("services.rules.rulesets")
    return rule and (name in sc.name or any(st.parsed.skill == name for st in sc.script))


def missing() -> list[str]:
    """`ruleset: card|skill NAME` for each owned card or skill without a scenario."""
    scenarios: dict[str, list[Scenario]] = {rid: [] for rid in ORDER}
    for rid in ORDER:
        for _, sc in load_paths([ROOT / rid]):
            if isinstance(sc, Scenario) and sc.ruleset == rid:
                scenarios[rid].append(sc)
    out = []
    for rid, kinds in owned().items():
        for kind, names in kinds.items():
            for name in sorted(names):
                if not any(name in sc.name and _holds(sc, kind, name) for sc in scenarios[rid]):
                    out.append(f"{rid}: {kind} {name}")
    return out


def test_every_ruleset_lists_what_it_owns() -> None:
    own = owned()
    assert set(own) == set(RULESETS), "a ruleset is missing from ORDER"
    assert len(own["standard"]["skill"]) == 42  # the 27 standard generals' skills
    assert {"药", "护官符"} <= own["honglou"]["card"] and "杀" not in own["honglou"]["card"]
    assert {"好色", "反间"} <= own["honglou"]["skill"]
    assert "奸雄" not in own["honglou"]["skill"]
    assert {"乐不思蜀", "走马换将", "白鸽"} <= own["chengtian"]["card"]
    assert {"金鱼", "谋攻", "明君"} <= own["jinyu"]["skill"]
    assert {"君威", "策立"} <= own["extended"]["skill"]


def test_every_card_and_skill_has_a_scenario_under_its_own_name() -> None:
    gaps = missing()
    assert not gaps, f"{len(gaps)} without a scenario under their own name:\n" + "\n".join(gaps)
