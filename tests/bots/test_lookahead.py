"""The look-ahead's parts: joint role draws, play-out views and minds, the state value, the
value fit and the per-table likelihoods (services/bots/rollout.py, value.py, valuefit.py,
roles.py)."""

from __future__ import annotations

from collections import Counter

from services.bots import valuefit
from services.bots.roles import POOLED, FixedBelief, RoleBelief, loglik, make_belief, table_key
from services.bots.rollout import Sim, play_out, sample_roles, view_of
from services.bots.search import SearchPolicy
from services.bots.selfplay import Table
from services.bots.value import FEATURES, classes, features, value
from services.rules import api

CARDS_5 = ["lord", "loyalist", "rebel", "rebel", "renegade"]


def _midgame(seed: int = 5, decisions: int = 60) -> tuple[api.Game, Table]:
    g = api.new_game("standard", 5, seed)
    t = Table(g, ["hard"] * 5, seed)
    t.feed(api.advance(g))
    for _ in range(decisions):
        d = g.pending
        assert d is not None and not g.over
        t.feed(api.submit(g, t.act(d)))
    return g, t


def test_joint_role_draws_follow_the_belief() -> None:
    """A draw is a whole arrangement of the hidden cards (never two lords, the known roles kept)
    and arrangements come up as often as the belief weighs them."""
    b = RoleBelief(CARDS_5, {0: "lord", 2: "rebel"})
    b.act(3, 0, hostile=True)  # seat 3 attacked the lord: likely the other rebel
    counts: Counter[str] = Counter()
    for i in range(2000):
        roles = sample_roles(b, 77, i * 3)
        assert sorted(roles.values()) == sorted(CARDS_5) and roles[0] == "lord"
        assert roles[2] == "rebel"
        counts[roles[3]] += 1
    assert abs(counts["rebel"] / 2000 - b.prob(3, "rebel")) < 0.05


def test_a_play_out_view_shows_only_the_seats_own_hand() -> None:
    g, _ = _midgame()
    for seat in range(5):
        v = view_of(g, seat)
        for s, p in zip(v.seats, g.players, strict=True):
            assert s.hand_count == len(g.players[s.seat].hand)
            assert s.hand == (list(p.hand) if s.seat == seat else [])
            assert s.role in ("", p.role)


def test_other_seats_in_a_play_out_never_read_my_role() -> None:
    """The other seats' minds know their own role and the public ones; mine stays at the prior
    of the unrevealed cards (they cannot know it), whatever my role is."""
    g, t = _midgame()
    me = g.pending.seat if g.pending else 0
    pol = t.policies[me]
    assert isinstance(pol, SearchPolicy) and pol.mem.belief is not None
    roles = sample_roles(pol.mem.belief, 1)
    world = api.determinize(g, me, {s: {r: 1.0} for s, r in roles.items()}, 1, view=t.views[me])
    sim = Sim(world, me, pol.mem, "belief")
    for x, mind in enumerate(sim.minds):
        if x == me or g.players[me].role_revealed:
            continue
        assert isinstance(mind, FixedBelief)
        marg = mind.marginals()
        assert marg[x] == {pol.mem.cls.get(world.players[x].role, "renegade"): 1.0}
        assert max(marg[me].values()) < 1.0


def test_play_outs_stop_at_the_horizon_and_the_budget() -> None:
    g, t = _midgame()
    me = g.pending.seat if g.pending else 0
    pol = t.policies[me]
    assert isinstance(pol, SearchPolicy) and pol.mem.belief is not None
    sim = Sim(g, me, pol.mem)
    w, m = sim.fork()
    assert play_out(sim, w, m, 1, 500, lambda: False) and (w.over or w.pending is not None)
    assert 0 < sim.steps <= 500
    w, m = sim.fork()
    assert play_out(sim, w, m, 5, 3, lambda: False) and sim.steps <= 503  # the decision cap
    w, m = sim.fork()
    assert not play_out(sim, w, m, 1, 500, lambda: True)  # the budget said stop at once
    assert g.pending is not None  # the world itself is never touched


def test_value_is_a_probability_and_a_decided_game_is_certain() -> None:
    g, _ = _midgame()
    of = classes(g)
    assert len(features(g, 0, of)) == len(FEATURES)
    for seat in range(5):
        assert 0.0 < value(g, seat, of) < 1.0
    done = api.new_game("standard", 5, 9)
    t = Table(done, ["heuristic"] * 5, 9)
    t.feed(api.advance(done))
    while not done.over:
        d = done.pending
        assert d is not None
        t.feed(api.submit(done, t.act(d)))
    of = classes(done)
    assert {value(done, s, of) for s in range(5)} <= {0.0, 1.0}
    assert [s for s in range(5) if value(done, s, of) == 1.0] == sorted(done.winners)


def test_a_dead_renegade_has_lost_and_a_dead_loyalist_has_not() -> None:
    """A renegade wins only as the last one standing, so once dead (the game going on) its value
    is 0; the fitted model, fitted on seats alive, scored that death as a small loss. A dead
    loyalist's side may still win."""
    g, _ = _midgame()
    of = classes(g)
    rene, loyal = of.index("renegade"), of.index("loyalist")
    assert value(g, rene, of) > 0.0
    for seat in (rene, loyal):
        dead = api.fork(g)
        dead.players[seat].alive, dead.players[seat].hp = False, 0
        assert not dead.over
        if seat == rene:
            assert value(dead, seat, of) == 0.0
        else:
            assert value(dead, seat, of) > 0.0
    # a 叛徒 alive (extended's 内奸 camp) may still win for a dead renegade
    dead = api.fork(g)
    dead.players[rene].alive, dead.players[rene].hp = False, 0
    assert value(dead, rene, [c if s != loyal else "renegade" for s, c in enumerate(of)]) > 0.0


def test_the_value_fit_recovers_a_known_logistic_model() -> None:
    """Outcomes drawn from P(y) = sigmoid(-1 + 2 x): the fit finds the signs and rough sizes,
    in pure Python and (when installed) with numpy alike."""
    import math

    from services.rules.api import rng

    samples = []
    for i in range(3000):
        x = rng.random_u64(5, 2 * i) / 2.0**64 * 2 - 1
        p = 1 / (1 + math.exp(-(-1 + 2 * x)))
        y = int(rng.random_u64(5, 2 * i + 1) / 2.0**64 < p)
        samples.append(([1.0, x], y))
    for w in (valuefit.fit(samples), valuefit._fit_python(samples, 12)):
        assert -1.5 < w[0] < -0.5 and 1.2 < w[1] < 2.8
    assert valuefit.log_loss(valuefit.fit(samples), samples) < 0.65


def test_likelihoods_per_table_fall_back_to_the_pooled_fit() -> None:
    """A table with its own fit reads it; a table without one (honglou) reads the pooled rates;
    once no rebel lives the acts read the endgame bucket."""
    assert table_key("jinyu", 8, {"mougong": True}) == "jinyu/8/mougong"
    own, _ = loglik(True, 2, True, "standard/5")
    pooled, _ = loglik(True, 2, True, POOLED)
    other, _ = loglik(True, 2, True, "honglou/8")
    assert other == pooled and own != pooled
    late, _ = loglik(True, 2, False, "standard/5")
    assert late != own
    b = make_belief(CARDS_5, {0: "lord"}, None, "standard/5")
    assert b.table == "standard/5"
