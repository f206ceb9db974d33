"""Judgement rules live with the card or skill that judges (issue #23 item 3): the core's
``JUDGE_RULES`` starts empty and names no card; every delayed trick of every ruleset has its
rule registered once the api is imported."""

from __future__ import annotations

import ast

from services.rules import api  # noqa: F401  (imports every card and skill module)
from services.rules.core.delayed import DelayedSpec
from services.rules.core.judge import JUDGE_RULES
from services.rules.core.use import CARD_SPECS, RULESET_SPECS
from tests.rules.test_no_service_imports import RULES


def test_every_delayed_trick_has_its_judgement_rule() -> None:
    specs = [*CARD_SPECS.values(), *(s for by in RULESET_SPECS.values() for s in by.values())]
    delayed = {s.name for s in specs if isinstance(s, DelayedSpec)}
    assert {"乐不思蜀", "兵粮寸断", "闪电"} <= delayed
    assert delayed <= set(JUDGE_RULES), delayed - set(JUDGE_RULES)
    assert "八卦阵" in JUDGE_RULES


def test_the_core_registers_no_judgement_rule() -> None:
    """core/judge.py defines ``JUDGE_RULES`` empty and no core module adds to it."""
    found = []
    for path in sorted((RULES / "core").glob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.AnnAssign | ast.Assign):
                targets = [n.target] if isinstance(n, ast.AnnAssign) else n.targets
                for t in targets:
                    name = t.value if isinstance(t, ast.Subscript) else t
                    if isinstance(name, ast.Name) and name.id == "JUDGE_RULES":
                        empty = isinstance(n.value, ast.Dict) and not n.value.keys
                        if not empty:
                            found.append(f"{path.name}:{n.lineno}")
    assert found == []
