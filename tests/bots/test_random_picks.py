"""`random_picks`, the bot worker's random answer without the policy object: the same picks as
`RandomPolicy(seed).act(d)` (any worker, in any version, answers a random seat alike), legal,
on decisions of real games and on made-up ones at the edges (no option, one, a decline, several
picks)."""

from __future__ import annotations

import random

from services.bots.random_policy import RandomPolicy, random_picks
from services.rules import api
from services.rules.api import Decision


def _same(seed: int, d: Decision) -> None:
    picks = random_picks(seed, d)
    assert picks == list(RandomPolicy(seed).act(d).picks), (seed, d)
    assert len(set(picks)) == len(picks) and set(picks) <= set(d.options)
    if picks:
        assert min(max(d.min, 1), len(d.options)) <= len(picks) <= max(d.max, 1)
    else:
        assert d.declinable or not d.options or min(d.max, len(d.options)) < 1


def test_the_picks_of_real_decisions_are_the_policys() -> None:
    rnd = random.Random(7)
    for seed in (1, 2):
        g = api.new_game("standard", 5, seed)
        api.advance(g)
        while not g.over:
            d = g.pending
            assert d is not None
            for s in (rnd.getrandbits(63), -rnd.getrandbits(63), rnd.getrandbits(70)):
                _same(s ^ d.id, d)
            api.submit(g, RandomPolicy(seed ^ d.id).act(d))


def test_the_picks_at_the_edges_are_the_policys() -> None:
    rnd = random.Random(11)
    for _ in range(20_000):
        n, most = rnd.randint(0, 6), rnd.randint(0, 4)
        d = Decision(
            id=rnd.getrandbits(62),
            seat=0,
            kind=rnd.choice(("play", "choose", "respond")),
            options=[f"o{i}" for i in range(n)],
            min=rnd.randint(0, most),
            max=most,
            declinable=rnd.random() < 0.5,
        )
        _same(rnd.getrandbits(64), d)
