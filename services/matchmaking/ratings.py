"""Ratings: openskill (Plackett-Luce), one rating per player and mode, teams by camp. Pure.

A game is scored camp against camp: the lord with the loyalists is one team, the rebels another,
each renegade plays alone (so does any role no camp table names — a variant ruleset registers
its camps in `VARIANT_CAMPS`). Camps holding a winning seat share rank 1, the rest rank 2; a
draw ranks every camp equal. Bots play at the model's prior and are never rated themselves, so
a bot seat neither gains nor gives away rating over time.

Order matters in any incremental rating system, so the ratings of a mode are defined as the
fold of its games sorted by (end time, game id): the live consumer and `arena ratings rebuild`
apply the same games in the same order and arrive at the same floats.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec
from openskill.models import PlackettLuce

MODEL = PlackettLuce()
STANDARD_CAMPS = {"lord": "lord", "loyalist": "lord", "rebel": "rebel"}
VARIANT_CAMPS: dict[str, dict[str, str]] = {}  # ruleset -> role -> camp (roles not named: alone)


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


def camps(result: GameResult) -> list[list[int]]:
    """The seats of each team, teams ordered by their first seat."""
    table = VARIANT_CAMPS.get(result.ruleset, STANDARD_CAMPS)
    teams: dict[str, list[int]] = {}
    for seat, role in enumerate(result.roles):
        camp = table.get(role)
        teams.setdefault(camp if camp is not None else f"alone:{seat}", []).append(seat)
    return sorted(teams.values(), key=lambda seats: seats[0])


def ranks(result: GameResult, teams: list[list[int]]) -> list[int]:
    """1 for a team holding a winning seat, 2 otherwise; all 1 on a draw."""
    won = set(result.winners)
    if result.draw or not won:
        return [1] * len(teams)
    return [1 if won.intersection(seats) else 2 for seats in teams]


def apply(current: Mapping[str, PlayerRating], result: GameResult) -> dict[str, PlayerRating]:
    """The new ratings of the game's human players, given their `current` ones (absent = prior).

    Raises ValueError for a result that cannot be rated (roles and seats disagree).
    """
    if not len(result.roles) == len(result.players) == len(result.bots):
        raise ValueError(f"game {result.game_id}: roles, players and bots differ in length")
    teams = camps(result)
    if len(teams) < 2:
        return {}
    model_teams = []
    for seats in teams:
        team = []
        for s in seats:
            r = PRIOR if result.bots[s] else current.get(result.players[s], PRIOR)
            team.append(MODEL.rating(mu=r.mu, sigma=r.sigma, name=str(s)))
        model_teams.append(team)
    rated = MODEL.rate(model_teams, ranks=[float(r) for r in ranks(result, teams)])
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
