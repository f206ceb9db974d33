"""The view fold agrees with the state: the god view exactly, every seat's view on counts."""

from __future__ import annotations

import pytest

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.core.views import fold


@pytest.mark.parametrize("players,seed", [(4, 1), (6, 2), (8, 3), (10, 4)])
def test_folded_views_match_the_state(players: int, seed: int) -> None:
    g = api.new_game("standard", players, seed)
    events = api.advance(g)
    policies = [RandomPolicy(seed * 100 + i) for i in range(players)]
    steps = 0
    while not g.over:
        d = g.pending
        assert d is not None
        events += api.submit(g, policies[d.seat].act(d))
        steps += 1
        if steps % 50 and not g.over:
            continue
        god = fold(events, api.GOD)
        assert god.draw_count == len(g.draw)
        assert sorted(god.discard) == sorted(g.discard)
        for sv, p in zip(god.seats, g.players, strict=True):
            assert (sv.hp, sv.max_hp, sv.alive) == (p.hp, p.max_hp, p.alive)
            assert sorted(sv.hand) == sorted(p.hand)
            assert sorted(sv.equip) == sorted(p.equip.values())
            assert sorted(sv.judge) == sorted(p.judge)
            assert sv.chained == p.chained
        for viewer in [*range(players), api.SPECTATOR]:
            v = fold(events, viewer)
            for sv, p in zip(v.seats, g.players, strict=True):
                assert sv.hand_count == len(p.hand)
                assert set(sv.hand) <= set(p.hand)
                if sv.seat == viewer:
                    assert sorted(sv.hand) == sorted(p.hand)
