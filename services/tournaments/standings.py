"""Tournament standings: win rates per entrant and role (bots.summary), per camp (how often the
lord's side, the rebels, the renegade … won, with 95% Wilson intervals), per entrant and camp,
and openskill per entrant.

Ratings: a policy usually holds several seats, often on both sides of a game, so a game is not
one team of policies against another. Each game is read as a result between every two policies
at the table instead: P beat Q if P's winning seats times Q's losing seats outnumber Q's winning
seats times P's losing seats (the seat pairs, one on each side, that one of them won), Q beat P
if the other way round, and no result if they tie or the game was a draw. Each result is one
1-v-1 openskill update from the ratings at the game's start (a policy's moves summed, its sigma
the smallest), so ratings stay centred where they started and an equal policy stays equal.
(Rating each seat inside its side and averaging a policy's seats, as before, drifted: the
two-team update is not zero-sum when the sides differ in size, and 2,000 games took both
policies' mu below 0.) Games are applied in game-number order, so a resumed tournament arrives
at the same numbers as an uninterrupted one.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

import msgspec
from openskill.models import PlackettLuce

from ..bots.stats import wilson
from ..bots.summary import GameRecord, summarise
from ..matchmaking.ratings import split_sides
from ..rules.api import RULESETS

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
        names = sorted(set(p.seats))
        for name in names:
            r.setdefault(name, (MODEL.mu, MODEL.sigma))
            n[name] = n.get(name, 0) + 1
        win, lose = split_sides(p.ruleset, p.roles, p.winners)
        if p.draw or not win or not lose:
            continue
        won = Counter(p.seats[s] for s in win)
        lost = Counter(p.seats[s] for s in lose)
        moves: dict[str, list[tuple[float, float]]] = {}  # every result from the game's start
        for a, b in combinations(names, 2):
            net = won[a] * lost[b] - won[b] * lost[a]
            if net == 0:
                continue
            first, second = (a, b) if net > 0 else (b, a)
            [[x], [y]] = MODEL.rate(
                [[MODEL.rating(*r[first])], [MODEL.rating(*r[second])]], ranks=[1.0, 2.0]
            )
            moves.setdefault(first, []).append((x.mu - r[first][0], x.sigma))
            moves.setdefault(second, []).append((y.mu - r[second][0], y.sigma))
        for name, m in moves.items():  # summed, so the pairs' order does not matter
            r[name] = (r[name][0] + sum(d for d, _ in m), min(sg for _, sg in m))
    return {
        k: {
            "mu": round(mu, 3),
            "sigma": round(sg, 3),
            "ordinal": round(mu - 3 * sg, 3),
            "games": n[k],
        }
        for k, (mu, sg) in sorted(r.items())
    }


def standings(games: list[Played]) -> dict[str, Any]:
    """Win rates with 95% intervals per policy and per (policy, role), and ratings."""
    recs = [
        GameRecord(seats=g.seats, roles=g.roles, winners=g.winners, draw=g.draw)
        for g in sorted(games, key=lambda g: g.i)
    ]
    out = summarise(recs, {}, [])
    out.pop("role_guess", None)
    out.pop("decision_ms", None)
    out.pop("decision_cpu_ms", None)
    out["ratings"] = rate(games)
    out["per_camp"], out["per_camp_entrant"] = by_camp(games)
    return out


def camps_of(ruleset: str, roles: list[str]) -> list[str]:
    """Each seat's camp: the ruleset's camp of its role (a role playing alone is its own: two
    renegades are both `renegade`), or the seat itself in a game without roles."""
    table = RULESETS[ruleset].camps if ruleset in RULESETS else {}
    return [table.get(r, r) if r else f"seat{s}" for s, r in enumerate(roles)]


def _rate(wins: int, n: int) -> dict[str, Any]:
    lo, hi = wilson(wins, n)
    return {
        "win_rate": round(wins / n, 4) if n else 0.0,
        "ci95": [round(lo, 4), round(hi, 4)],
        "wins": wins,
        "games": n,
    }


def by_camp(games: list[Played]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(camp -> how often it won, of the games it was at the table, with a 95% interval and the
    draws; entrant -> camp -> how often a seat of that entrant in that camp won)."""
    won: Counter[str] = Counter()
    present: Counter[str] = Counter()
    mine: dict[tuple[str, str], list[int]] = {}
    draws = 0
    for g in games:
        camps = camps_of(g.ruleset, g.roles)
        winners = {camps[s] for s in g.winners} if not g.draw else set()
        draws += g.draw
        for c in set(camps):
            present[c] += 1
            won[c] += c in winners
        for entrant in set(g.seats):
            for c in {camps[s] for s, e in enumerate(g.seats) if e == entrant}:
                mine.setdefault((entrant, c), []).append(int(c in winners))
    camp = {c: _rate(won[c], present[c]) for c in sorted(present, key=lambda c: -present[c])}
    if draws:
        camp["draw"] = _rate(draws, len(games))
    per_entrant: dict[str, dict[str, Any]] = {}
    for (e, c), xs in sorted(mine.items()):
        per_entrant.setdefault(e, {})[c] = _rate(sum(xs), len(xs))
    return camp, per_entrant


def table(result: dict[str, Any]) -> Any:
    """A rich Table of the standings."""
    from rich.table import Table

    from ..bots.summary import ROLES

    t = Table(
        title=f"{result['games_done']} games · {result['spec']['ruleset']} "
        f"{result['spec']['players']} players"
    )
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
        t.add_row(
            name,
            fmt(pol),
            *(fmt(roles.get(r)) for r in ROLES),
            f"{rt.get('mu', 0):.2f} ± {rt.get('sigma', 0):.2f}",
            f"{rt.get('ordinal', 0):.2f}",
        )
    return t
