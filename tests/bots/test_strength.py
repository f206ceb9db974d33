"""Strength: the heuristic beats random (a quick smoke test; the full count is marked slow)."""

from __future__ import annotations

import pytest

from services.bots.selfplay import selfplay


def test_heuristic_beats_random_as_the_lords_side() -> None:
    """Whole camps share a policy: the heuristic lord's side wins clearly more than random's."""
    out = selfplay("standard", 8, 160, 1, ["heuristic", "random"], assign="camp")
    h, r = out["per_role"]["heuristic"]["lord"], out["per_role"]["random"]["lord"]
    assert h["ci95"][0] > r["ci95"][1], (h, r)
    assert out["margin"]["lord"]["ci95"][0] > 0


@pytest.mark.slow
def test_full_measurement_standard_8() -> None:
    """2,000 games, policies rotated over seats: the heuristic wins more as lord and overall."""
    out = selfplay("standard", 8, 2000, 1, ["heuristic", "random"])
    assert out["margin"]["lord"]["ci95"][0] > 0
    ph, pr = out["per_policy"]["heuristic"], out["per_policy"]["random"]
    assert ph["ci95"][0] > pr["ci95"][1]
    assert out["decision_cpu_ms"]["heuristic"]["p99"] < 5.0


@pytest.mark.slow
def test_full_measurement_by_camp() -> None:
    """2,000 games, camps rotated: the heuristic side wins more in every role."""
    out = selfplay("standard", 8, 2000, 1, ["heuristic", "random"], assign="camp")
    for role in ("lord", "loyalist", "rebel", "renegade"):
        assert out["margin"][role]["ci95"][0] > 0, role
