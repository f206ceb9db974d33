"""api.determinize: a state the seat could be in, built from what it has seen only.

Property tests over states reached by seeded random play at any decision: the determinized state
never contradicts the deciding seat's view; it reads nothing the seat may not know (a second
state that differs from the first only in hidden things — unseen hands, the pile, hidden roles,
the seed — determinizes to the very same bytes); and the engine plays on from it. A few hundred
states in the default suite, thousands under ``-m slow``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.api import Game, View
from services.rules.determinize import ViewMismatch, contradictions

TABLES: list[tuple[str, int, dict[str, Any]]] = [
    ("standard", 8, {}),
    ("standard", 5, {}),
    ("jinyu", 8, {"mougong": True}),
    ("extended", 8, {}),
    ("honglou", 6, {}),
]


def _state(table: int, seed: int, steps: int) -> tuple[Game, View]:
    """Random play for ``steps`` decisions; the game and the view of the seat then deciding."""
    ruleset, players, options = TABLES[table]
    g = api.new_game(ruleset, players, seed, options)
    events = list(api.advance(g))
    pol = RandomPolicy(seed)
    for _ in range(steps):
        if g.over:
            break
        d = g.pending
        assert d is not None
        events += api.submit(g, pol.act(d))
    if g.over:  # the game ended first: replay to its last decision instead
        return _state(table, seed, max(0, steps // 2))
    assert g.pending is not None
    view = api.new_view(g.pending.seat)
    for e in events:
        api.apply_view(view, e)
    return g, view


def _belief(g: Game, weights: list[float]) -> dict[int, dict[str, float]]:
    roles = sorted({p.role for p in g.players})
    return {
        t: {r: weights[(t * 7 + i) % len(weights)] for i, r in enumerate(roles)}
        for t in range(len(g.players))
    }


STATES = {
    "table": st.integers(0, len(TABLES) - 1),
    "seed": st.integers(0, 10**6),
    "steps": st.integers(0, 250),
    "det": st.integers(0, 2**62),
    "alt": st.integers(0, 2**62),
    "weights": st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
}


def _check(table: int, seed: int, steps: int, det: int, alt: int, weights: list[float]) -> None:
    g, view = _state(table, seed, steps)
    seat = view.viewer
    belief = _belief(g, weights)
    out = api.determinize(g, seat, belief, det, view=view)
    assert contradictions(out, view) == []
    assert contradictions(g, view) == []  # the check itself: the truth agrees with the view
    # another truth the seat cannot tell from this one, determinized alike, gives the same bytes
    other = api.determinize(g, seat, None, alt, view=view)
    other.seed, other.rng = alt, g.rng + alt % 7  # another seed too: the future is hidden
    assert contradictions(other, view) == []
    again = api.determinize(other, seat, belief, det, view=view)
    assert api.snapshot(again) == api.snapshot(out)
    # the engine plays on from it (a few random decisions)
    pol = RandomPolicy(det)
    for _ in range(20):
        if out.over:
            break
        d = out.pending
        assert d is not None
        api.submit(out, pol.act(d))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**STATES)
def test_determinize_keeps_the_view_and_reads_nothing_hidden(
    table: int, seed: int, steps: int, det: int, alt: int, weights: list[float]
) -> None:
    _check(table, seed, steps, det, alt, weights)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**STATES)
def test_determinize_many_states(
    table: int, seed: int, steps: int, det: int, alt: int, weights: list[float]
) -> None:
    _check(table, seed, steps, det, alt, weights)


def test_hidden_things_are_resampled() -> None:
    """Over seeds, unseen hands and hidden roles do change; what the seat saw never does."""
    g, view = _state(0, 11, 60)
    seat = view.viewer
    hands, roles = set(), set()
    for det in range(8):
        out = api.determinize(g, seat, None, det, view=view)
        assert out.players[seat].hand == g.players[seat].hand
        hands.add(tuple(tuple(p.hand) for t, p in enumerate(out.players) if t != seat))
        roles.add(tuple(p.role for p in out.players))
        assert out.seed != g.seed
    assert len(hands) > 1 and len(roles) > 1


def test_a_view_of_another_game_is_refused() -> None:
    g, view = _state(0, 3, 40)
    h, _ = _state(0, 4, 40)
    with pytest.raises(ViewMismatch):
        api.determinize(h, view.viewer, None, 1, view=view)
