"""Role belief and the summary statistics."""

from __future__ import annotations

import math

from services.bots.roles import RoleBelief
from services.bots.stats import newcombe, percentile, wilson

CARDS_8 = ["lord", "loyalist", "loyalist", "rebel", "rebel", "rebel", "rebel", "renegade"]


def test_assignments_are_the_distinct_arrangements() -> None:
    b = RoleBelief(CARDS_8, {0: "lord", 3: "rebel"})
    assert len(b.assign) == math.factorial(6) // (2 * 6 * 1)  # 2 L, 3 R, 1 N over 6 seats
    assert abs(sum(b.marginals()[5].values()) - 1) < 1e-9
    assert abs(b.prob(5, "rebel") - 0.5) < 1e-9


def test_hostility_to_the_lord_points_at_rebels_and_friendly_acts_at_loyalists() -> None:
    b = RoleBelief(CARDS_8, {0: "lord", 3: "rebel"})
    before = b.prob(4, "rebel")
    b.act(4, 0, hostile=True)
    assert b.prob(4, "rebel") > before
    b.act(6, 0, hostile=False)
    assert b.prob(6, "loyalist") > 2 / 6
    b.reveal(6, "loyalist")
    assert b.prob(6, "loyalist") == 1.0 and len(b.assign) == 20  # 1 L, 3 R, 1 N over 5 seats


def test_wilson_and_newcombe() -> None:
    lo, hi = wilson(50, 100)
    assert abs(lo - 0.4038) < 1e-3 and abs(hi - 0.5962) < 1e-3
    assert wilson(0, 0) == (0.0, 1.0)
    d, lo, hi = newcombe(60, 100, 40, 100)
    assert abs(d - 0.2) < 1e-9 and 0.05 < lo < 0.2 < hi < 0.35
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
