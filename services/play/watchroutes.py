"""The routes served beside the play API's router, for routes.py's table (its OpenAPI document):
the Bot API and the organisers' routes (botroutes.py, `served="bot"`), the tournaments
(tournamentroutes.py, `served="tournaments"`), and the replay server's win-chance chart and TV
(`served="replay"`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import watchschema
from .apiroute import ApiRoute, Param
from .botroutes import BOT_ROUTES, BOT_STREAM_TYPES
from .tournamentroutes import TOURNAMENT_ROUTES

if TYPE_CHECKING:
    from .routes import Query, Route

VIEWER = Param(
    "viewer",
    "spectator (default), god, or a seat number (with that seat's token: Authorization: Bearer)",
    {"type": "string"},
)
WATCH_ROUTES = [
    ApiRoute(
        "chart",
        "GET",
        "/api/games/{game}/chart",
        "Who is winning: each camp's chance to win, move by move, with the key moments. A live "
        "game's is computed from what a spectator sees (for every viewer), held the viewer's "
        "delay behind; a finished game's from the whole log",
        response=watchschema.Chart,
        errors=(400, 403, 404),
        query=(
            VIEWER,
            Param(
                "delay", "watch at least this far behind, in ms", {"type": "integer", "minimum": 0}
            ),
        ),
    ),
    ApiRoute(
        "tv",
        "GET",
        "/api/tv",
        "The featured live game, by the rule it states (most seats alive, then the closest on "
        "its chart, then the furthest along), and the games it was chosen among",
        response=watchschema.Tv,
    ),
]
STREAM_TYPES = BOT_STREAM_TYPES
"""Bodies these routes' streams send (for the document's components)."""


def extra_routes(route: type[Route], query: type[Query]) -> list[Route]:
    """Every route above as routes.py's `Route` (passed in: routes.py imports this module)."""
    out = []
    for served, table in (
        ("bot", BOT_ROUTES),
        ("tournaments", TOURNAMENT_ROUTES),
        ("replay", WATCH_ROUTES),
    ):
        for r in table:
            fields: dict[str, Any] = {
                "body": r.body,
                "response": r.response,
                "status": r.status,
                "auth": r.auth or False,
                "errors": r.errors,
                "events": r.events,
                "query": tuple(query(q.name, q.about, q.schema) for q in r.query),
                "served": served,
                "media": r.media,
            }
            out.append(route(r.name, r.method, r.path, r.summary, **fields))
    return out
