"""Tournament ratings (standings.rate): one 1-v-1 result per pair of policies per game, so
ratings stay centred, equal policies stay equal, and the better policy rates higher."""

from __future__ import annotations

import random

from services.tournaments.standings import MODEL, Played, rate

ROLES = ["lord", "loyalist", "rebel", "rebel", "renegade"]


def _game(i: int, seats: list[str], winners: list[int]) -> Played:
    return Played(i=i, game=f"g{i}", seed=i, seats=seats, roles=ROLES, winners=winners)


def _random_games(n: int, better: str | None) -> list[Played]:
    """Games whose lord's side (seats 0, 1) or rebels (2, 3) win; with `better`, the side with
    more of its seats wins more often."""
    rnd = random.Random(7)
    out = []
    for i in range(n):
        seats = [rnd.choice("ab") for _ in ROLES]
        p_lord = 0.5
        if better is not None:
            edge = sum(s == better for s in seats[:2]) - sum(s == better for s in seats[2:4])
            p_lord = 0.5 + 0.2 * edge
        out.append(_game(i, seats, [0, 1] if rnd.random() < p_lord else [2, 3]))
    return out


def test_equal_policies_stay_equal_and_centred() -> None:
    r = rate(_random_games(2000, None))
    assert abs(r["a"]["mu"] - r["b"]["mu"]) < 1.5
    assert abs((r["a"]["mu"] + r["b"]["mu"]) / 2 - MODEL.mu) < 0.5


def test_the_better_policy_rates_higher_without_drift() -> None:
    r = rate(_random_games(2000, "a"))
    assert r["a"]["mu"] > r["b"]["mu"] + 2
    assert abs((r["a"]["mu"] + r["b"]["mu"]) / 2 - MODEL.mu) < 0.5  # the old update drifted


def test_a_game_tells_nothing_between_tied_policies() -> None:
    # a and b each won one seat and lost none: tied with each other, both beat c
    r = rate([_game(0, ["a", "b", "c", "c", "c"], [0, 1])])
    assert r["a"]["mu"] == r["b"]["mu"] > MODEL.mu > r["c"]["mu"]
    # a won 1 and lost 2, b won 1 and lost 1: b's seats did better
    r = rate([_game(0, ["a", "b", "b", "a", "a"], [0, 1])])
    assert r["b"]["mu"] > MODEL.mu > r["a"]["mu"]


def test_order_of_arrival_does_not_matter() -> None:
    games = _random_games(300, "a")
    assert rate(games) == rate(list(reversed(games)))
