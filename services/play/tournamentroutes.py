"""The tournaments' routes (handled by tournaments.TournamentRouter, by name); routes.py lists them
(`served="tournaments"`) so they are in the play API's OpenAPI document."""

from __future__ import annotations

from . import tournamentschema as ts
from .apiroute import ApiRoute as Route

ONE = "/api/tournaments/{key}"


def _make() -> list[Route]:
    routes = [
        Route(
            "tournaments",
            "GET",
            "/api/tournaments",
            "Every tournament (made in the browser or by `arena tournament`), newest first",
            response=ts.Tournaments,
        ),
        Route(
            "create_tournament",
            "POST",
            "/api/tournaments",
            "Create a tournament and start playing it (organisers). The same spec as one that "
            "exists is that tournament: it continues where it stopped",
            ts.NewTournament,
            ts.TournamentSummary,
            201,
            auth="organiser",
            errors=(400, 401, 409, 415),
        ),
        Route(
            "tournament",
            "GET",
            ONE,
            "A tournament: progress, standings (per camp with 95% intervals, per entrant, "
            "ratings), every finished game (its replay) and the games being played (live)",
            response=ts.Tournament,
            errors=(404,),
        ),
        Route(
            "tournament_stream",
            "GET",
            ONE + "/stream",
            "The tournament, live: a message whenever a game finishes or starts",
            errors=(404,),
            events="`event: tournament` + `data: Tournament` at once and after each change",
        ),
        Route(
            "tournament_csv",
            "GET",
            ONE + "/games.csv",
            "Every finished game as CSV: number, game id, then each seat's entrant and role, "
            "the winning seats, draw",
            errors=(404,),
            media="text/csv",
        ),
        Route(
            "stop_tournament",
            "POST",
            ONE + "/stop",
            "Stop playing it (organisers): the games in flight end, nothing new starts; "
            "resume carries on from the journal",
            response=ts.TournamentSummary,
            auth="organiser",
            errors=(401, 404, 409),
        ),
        Route(
            "resume_tournament",
            "POST",
            ONE + "/resume",
            "Play what its journal lacks (organisers), on this web server",
            response=ts.TournamentSummary,
            auth="organiser",
            errors=(401, 404, 409),
        ),
    ]
    return routes


TOURNAMENT_ROUTES = _make()
"""The tournaments' routes (routes.py lists them too, for its OpenAPI document)."""
