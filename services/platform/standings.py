"""Tournament standings: win rates per policy and role (bots.summary) and openskill per policy.

Ratings: every game is the winning camps against the losing camps (as in matchmaking.ratings),
each seat entered at its policy's current rating. A policy usually holds several seats, often on
both sides; its new rating moves by the mean of its seats' changes (mu) and takes the mean of
their new sigmas. Games are applied in game-number order, so a resumed tournament arrives at
the same numbers as an uninterrupted one.
"""

from __future__ import annotations

from typing import Any

import msgspec
from openskill.models import PlackettLuce

from ..bots.summary import GameRecord, summarise
from ..matchmaking.ratings import split_sides

MODEL = PlackettLuce()


class Played(msgspec.Struct, frozen=True, kw_only=True):
    """One finished tournament game (a line of the journal)."""

    i: int
    game: str
    seed: int
    seats: list[str]  # policy by seat
    roles: list[str]
    winners: list[int]
    draw: bool = False
    ruleset: str = "standard"  # whose camps decide the sides


def rate(games: list[Played]) -> dict[str, dict[str, float]]:
    """openskill mu, sigma, ordinal (mu - 3 sigma) and games per policy."""
    r: dict[str, tuple[float, float]] = {}
    n: dict[str, int] = {}
    for p in sorted(games, key=lambda g: g.i):
        for name in set(p.seats):
            r.setdefault(name, (MODEL.mu, MODEL.sigma))
            n[name] = n.get(name, 0) + 1
        win, lose = split_sides(p.ruleset, p.roles, p.winners)
        if p.draw or not win or not lose:
            continue
        teams = [[MODEL.rating(mu=r[p.seats[s]][0], sigma=r[p.seats[s]][1]) for s in side]
                 for side in (win, lose)]
        rated = MODEL.rate(teams, ranks=[1.0, 2.0])
        moves: dict[str, list[tuple[float, float]]] = {}
        for side, team in zip((win, lose), rated, strict=True):
            for s, new in zip(side, team, strict=True):
                moves.setdefault(p.seats[s], []).append((new.mu - r[p.seats[s]][0], new.sigma))
        for name, m in moves.items():
            mu = r[name][0] + sum(d for d, _ in m) / len(m)
            r[name] = (mu, sum(sg for _, sg in m) / len(m))
    return {k: {"mu": round(mu, 3), "sigma": round(sg, 3), "ordinal": round(mu - 3 * sg, 3),
                "games": n[k]} for k, (mu, sg) in sorted(r.items())}


def standings(games: list[Played]) -> dict[str, Any]:
    """Win rates with 95% intervals per policy and per (policy, role), and ratings."""
    recs = [GameRecord(seats=g.seats, roles=g.roles, winners=g.winners, draw=g.draw)
            for g in sorted(games, key=lambda g: g.i)]
    out = summarise(recs, {}, [])
    out.pop("role_guess", None)
    out.pop("decision_ms", None)
    out.pop("decision_cpu_ms", None)
    out["ratings"] = rate(games)
    return out


def table(result: dict[str, Any]) -> Any:
    """A rich Table of the standings."""
    from rich.table import Table

    from ..bots.summary import ROLES

    t = Table(title=f"{result['games_done']} games · {result['spec']['ruleset']} "
                    f"{result['spec']['players']} players")
    t.add_column("policy")
    t.add_column("win rate [95%]", justify="right")
    for role in ROLES:
        t.add_column(role, justify="right")
    t.add_column("mu ± sigma", justify="right")
    t.add_column("ordinal", justify="right")
    st = result["standings"]

    def fmt(x: dict[str, Any] | None) -> str:
        if not x:
            return "—"
        lo, hi = x["ci95"]
        return f"{x['win_rate']:.3f} [{lo:.2f}, {hi:.2f}]"

    for name, pol in st["per_policy"].items():
        roles = st["per_role"].get(name, {})
        rt = st["ratings"].get(name, {})
        t.add_row(name, fmt(pol), *(fmt(roles.get(r)) for r in ROLES),
                  f"{rt.get('mu', 0):.2f} ± {rt.get('sigma', 0):.2f}",
                  f"{rt.get('ordinal', 0):.2f}")
    return t
