"""Every scenario file under tests/scenarios runs through the engine and holds (SCENARIOS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.rules.scenario.loader import load_paths
from services.rules.scenario.model import Scenario, ScenarioFormatError
from services.rules.scenario.runner import ScenarioFailed, run_scenario
from services.rules.scenario.table import TableError

ROOT = Path(__file__).resolve().parents[1] / "scenarios"
LOADED = load_paths([ROOT])


@pytest.mark.parametrize("path,sc", LOADED, ids=[str(p.relative_to(ROOT)) for p, _ in LOADED])
def test_scenario(path: Path, sc: Scenario | ScenarioFormatError) -> None:
    if isinstance(sc, ScenarioFormatError):
        pytest.fail(str(sc))
    try:
        run_scenario(sc)
    except (ScenarioFailed, TableError) as err:
        pytest.fail(f"{sc.name}: {err}")


def test_there_are_well_over_a_hundred_standard_scenarios() -> None:
    assert len(list((ROOT / "standard").rglob("*.yaml"))) > 100


def test_every_expected_refusal_names_its_rule() -> None:
    """An `expect_error` that any refusal would satisfy proves little: each file says which rule
    word the engine's reason must contain (out of range, once per phase, the protecting skill …)."""
    bare = [
        str(path.relative_to(ROOT))
        for path, sc in LOADED
        if isinstance(sc, Scenario) and sc.expect_error is not None and not sc.expect_error.contains
    ]
    assert not bare, f"expect_error without contains: {bare}"
