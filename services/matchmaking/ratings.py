"""Ratings: openskill (Plackett-Luce), one rating per player and mode, teams by camp. Pure.

Seats are grouped into camps: the lord with the loyalists, the rebels, each renegade alone (so
is any role its ruleset's `camps` table does not name).
The camps holding a winning seat form the winning team (rank 1); the other camps together form
the losing team (rank 2). Why not one openskill team per losing camp, tied at rank 2: the game
says nothing about the order among losers, and openskill sums a team's ratings, so a lone
renegade "tied" with the four-strong rebel camp reads as the renegade outperforming and raises
its rating although it lost. A draw (a reshuffle cap) is counted but moves nobody. Bots play at
the model's prior and are never rated themselves, so a bot seat neither gains nor gives away
rating over time.

Order matters in any incremental rating system, so the ratings of a mode are defined as the
fold of its games sorted by (end time, game id): the live consumer and `arena ratings rebuild`
apply the same games in the same order and arrive at the same floats.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec
from openskill.models import PlackettLuce

from ..rules.api import RULESETS

MODEL = PlackettLuce()


class GameResult(msgspec.Struct, frozen=True, kw_only=True):
    """What rating needs from a finished game (taken from its log or archive file)."""

    game_id: str
    mode: str
    ruleset: str
    ended_ms: int
    players: list[str]
    bots: list[bool]
    roles: list[str]
    winners: list[int]
    draw: bool = False

    def order(self) -> tuple[int, str]:
        """Where the game sits in its mode's rating history."""
        return self.ended_ms, self.game_id


class PlayerRating(msgspec.Struct, frozen=True, array_like=True):
    """A player's rating in one mode."""

    mu: float
    sigma: float
    games: int = 0

    @property
    def ordinal(self) -> float:
        """The conservative skill estimate used for leaderboards: mu - 3 sigma."""
        return self.mu - 3 * self.sigma


PRIOR = PlayerRating(MODEL.mu, MODEL.sigma, 0)


def camp_teams(ruleset: str, roles: list[str]) -> list[list[int]]:
    """The seats of each camp (the ruleset's `camps`; an unnamed role plays alone), ordered by
    their first seat."""
    table = RULESETS[ruleset].camps if ruleset in RULESETS else {}
    teams: dict[str, list[int]] = {}
    for seat, role in enumerate(roles):
        camp = table.get(role)
        teams.setdefault(camp if camp is not None else f"alone:{seat}", []).append(seat)
    return sorted(teams.values(), key=lambda seats: seats[0])


def split_sides(
    ruleset: str, roles: list[str], winners: Iterable[int]
) -> tuple[list[int], list[int]]:
    """(seats of the winning camps, seats of the losing camps)."""
    won = set(winners)
    win: list[int] = []
    lose: list[int] = []
    for seats in camp_teams(ruleset, roles):
        (win if won.intersection(seats) else lose).extend(seats)
    return sorted(win), sorted(lose)


def camps(result: GameResult) -> list[list[int]]:
    """The seats of each team of a finished game."""
    return camp_teams(result.ruleset, result.roles)


def sides(result: GameResult) -> tuple[list[int], list[int]]:
    """(seats of the winning camps, seats of the losing camps) of a finished game."""
    return split_sides(result.ruleset, result.roles, result.winners)


def apply(current: Mapping[str, PlayerRating], result: GameResult) -> dict[str, PlayerRating]:
    """The new ratings of the game's human players, given their `current` ones (absent = prior).

    Raises ValueError for a result that cannot be rated (roles and seats disagree).
    """
    if not len(result.roles) == len(result.players) == len(result.bots):
        raise ValueError(f"game {result.game_id}: roles, players and bots differ in length")
    if all(result.bots):  # nobody to rate: no model to run (most of the platform's games)
        return {}
    win, lose = sides(result)
    if result.draw or not win or not lose:
        return {
            p: PlayerRating(r.mu, r.sigma, r.games + 1)
            for p, r in (
                (p, current.get(p, PRIOR))
                for p, b in zip(result.players, result.bots, strict=True)
                if not b
            )
        }
    teams = [win, lose]
    model_teams = []
    for seats in teams:
        team = []
        for s in seats:
            r = PRIOR if result.bots[s] else current.get(result.players[s], PRIOR)
            team.append(MODEL.rating(mu=r.mu, sigma=r.sigma, name=str(s)))
        model_teams.append(team)
    rated = MODEL.rate(model_teams, ranks=[1.0, 2.0])
    out: dict[str, PlayerRating] = {}
    for seats, team in zip(teams, rated, strict=True):
        for s, new in zip(seats, team, strict=True):
            if not result.bots[s]:
                before = current.get(result.players[s], PRIOR)
                out[result.players[s]] = PlayerRating(new.mu, new.sigma, before.games + 1)
    return out


def fold(results: Iterable[GameResult]) -> dict[str, dict[str, PlayerRating]]:
    """Ratings per mode from scratch: every game applied in (end time, game id) order."""
    out: dict[str, dict[str, PlayerRating]] = {}
    seen: set[str] = set()
    for result in sorted(results, key=GameResult.order):
        if result.game_id in seen:
            continue  # the same game twice counts once
        seen.add(result.game_id)
        table = out.setdefault(result.mode, {})
        table.update(apply(table, result))
    return out
