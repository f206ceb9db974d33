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


def test_calibration_by_round() -> None:
    """`arena bench bots` scores the role guesses: at round 1 (before any act) the belief is the
    uniform prior, so its Brier score and log-loss equal the prior's; every figure is a mean over
    hidden seats and in range."""
    from services.bench.bots import calibration

    cal = calibration("standard", 5, 3, 1)
    first = cal["by_round"]["round_1"]
    assert first["samples"] > 0
    assert abs(first["brier"] - first["prior_brier"]) < 1e-3
    assert abs(first["log_loss"] - first["prior_log_loss"]) < 1e-3
    for r in cal["by_round"].values():
        assert 0.0 <= r["brier"] <= 2.0 and r["log_loss"] >= 0.0


def test_own_acts_are_not_evidence() -> None:
    """A 杀 of my own says nothing about its target (else a blind first attack proves itself);
    another seat's 杀 on the same target moves the belief."""
    from services.bots.memory import Memory
    from services.rules.api import events as ev

    mem = Memory(2)
    mem.belief = RoleBelief(CARDS_8, {0: "lord", 2: "loyalist"})
    before = dict(mem.belief.marginals()[5])
    slash = ev.CardUsed(user=2, name="杀", suit="spade", rank=7, cards=[1], targets=[5])
    mem.observe(slash)
    assert mem.belief.marginals()[5] == before
    mem.observe(ev.CardUsed(user=3, name="杀", suit="spade", rank=7, cards=[2], targets=[5]))
    assert mem.belief.marginals()[5] != before


def test_lordsight_is_told_the_hidden_lord_and_nothing_else() -> None:
    """`lordsight` (for splitting the oracle gap of a hidden lord) knows the lord's seat from the
    start; the other hidden roles stay a belief; the honest heuristic knows neither."""
    from services.bots.selfplay import Table
    from services.rules import api

    g = api.new_game("jinyu", 8, 3, {"mougong": True})
    roles = [p.role for p in g.players]
    lord = roles.index("lord")
    t = Table(g, ["lordsight"] * 4 + ["heuristic"] * 4, 3, False)
    t.feed(api.advance(g))
    for s, p in enumerate(t.policies):
        b = p.mem.belief  # type: ignore[attr-defined]
        others = [o for o in range(8) if o not in (s, lord)]
        assert not any(b.certain(o) for o in others)
        if s == lord:
            continue
        told = s < 4
        assert b.certain(lord) is told
        assert (b.prob(lord, "lord") == 1.0) is told


def test_a_seat_that_did_not_flip_by_mingjun_is_not_the_hidden_lord() -> None:
    """谋攻's hidden lord flips (明君, a 觉醒技) when it enters dying and when its turn starts in
    round 3. By the next phase every honest seat has struck a seat that passed either point
    unflipped off the lord (public evidence: the absence of a reveal), and never the true lord."""
    from services.bots.selfplay import Table
    from services.rules import api
    from services.rules.api import events as ev

    passed = 0
    for seed in (1, 2, 3, 4):
        g = api.new_game("jinyu", 8, seed, {"mougong": True})
        lord = [p.role for p in g.players].index("lord")
        t = Table(g, ["heuristic"] * 8, seed, False)
        t.feed(api.advance(g))
        unflipped: set[int] = set()
        revealed = False
        while not g.over and not revealed:
            assert g.pending is not None
            new = api.submit(g, t.act(g.pending))
            t.feed(new)
            for e in new:
                if isinstance(e, ev.RoleAssigned) and e.role == "lord":
                    revealed = True
                elif isinstance(e, ev.Dying) or isinstance(e, ev.TurnStarted) and e.round >= 3:
                    unflipped.add(e.seat)
            for s, p in enumerate(t.policies):
                if s == lord:
                    continue
                b = p.mem.belief  # type: ignore[attr-defined]
                assert b.prob(lord, "lord") > 0.0  # the evidence never rules out the true lord
                if not revealed and any(isinstance(e, ev.PhaseStarted) for e in new):
                    for x in unflipped - {s}:
                        passed += 1
                        assert b.prob(x, "lord") == 0.0, (seed, s, x)
    assert passed > 0  # the rule was exercised
