"""Every route of the play API, by name: method, path, body and response types, what it does.

The HTTP handlers (http.py) are found by these names, and the OpenAPI document is generated
from this table and the msgspec structs of schema.py (`openapi()`), so route, handler and
document cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from . import schema
from .ratelimit import (
    DEFAULT_ANSWERS_PER_S,
    GUESTS_PER_ADDRESS,
    SEATS_PER_ADDRESS,
    SEATS_PER_GUEST,
)

COOKIE = "arena_session"
TITLE = "Arena play API"
VERSION = "1"


@dataclass(frozen=True)
class Query:
    """A query parameter of a route: its name, what it means, its JSON Schema."""

    name: str
    about: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class Route:
    """One route. `response` None: a Server-Sent Events stream, described by `events`;
    `served`: by the play API's router (`play`) or the replay server's own routes (`replay`)."""

    name: str
    method: str
    path: str
    summary: str
    body: type[msgspec.Struct] | None = None
    response: type | None = None  # a msgspec Struct (or a dataclass: VerifyReport)
    status: int = 200
    auth: bool | str = True  # True: a person's session; a str: the bearer it takes (bot, organiser)
    errors: tuple[int, ...] = ()
    events: str = ""
    query: tuple[Query, ...] = ()
    served: str = "play"
    media: str = ""  # a body that is not JSON (text/csv)


def _int(lo: int, hi: int | None = None) -> dict[str, Any]:
    """The JSON Schema of an integer query parameter in lo..hi."""
    out: dict[str, Any] = {"type": "integer", "minimum": lo}
    if hi is not None:
        out["maximum"] = hi
    return out


LANG = Query(
    "lang",
    "the language of prompts and labels: zh or en (default: the Accept-Language, else en)",
    {"type": "string", "enum": ["zh", "en"]},
)
VIEWER = Query(
    "viewer",
    "spectator (default), god, or a seat number (a seat's view of a live game needs that "
    "seat's token: Authorization: Bearer)",
    {"type": "string"},
)
DELAY = Query("delay", "watch at least this far behind, in ms (default 0)", _int(0))


SEAT = "/api/games/{game}/seats/{seat}"
SEAT_ERRORS = (400, 401, 403, 404, 503)
ENTRIES = (
    "one of the schemas HeaderEntry, EventEntry, AnswerEntry, RevealEntry, ControlEntry, "
    "OtherEntry (told apart by `kind`; every channel sends the same)"
)
ROUTES = [
    Route(
        "new_guest",
        "POST",
        "/api/guests",
        "Sit down as a guest: a new player id with the name given, and a session (the "
        f"`{COOKIE}` cookie, HttpOnly, SameSite=Strict; and `token` for the Authorization header)",
        schema.NewGuest,
        schema.Guest,
        201,
        auth=False,
        errors=(400, 415),
    ),
    Route(
        "me",
        "GET",
        "/api/me",
        "Who the credential belongs to, and where: waiting at a table, seated (the game, the "
        "seat, whether the game is over and the seat alive), or neither",
        response=schema.Me,
        errors=(401,),
    ),
    Route(
        "settings",
        "GET",
        "/api/me/settings",
        "The person's own settings, kept on the server with their account: `hosted_level`, "
        'the bot level that plays their seats on 托管 by default ("": none set, the table\'s)',
        response=schema.PersonSettings,
        errors=(401,),
    ),
    Route(
        "set_settings",
        "PUT",
        "/api/me/settings",
        "Set the person's own settings (every field; another device reads them too). "
        '`hosted_level` one of /api/modes `bot_levels`, or "" to clear it: their seats then '
        "go on 托管 at it — 托管 asked without a level, time-outs, resign — at every table they "
        "sit at from now (recorded for a seat when the server opens it for them), and at the "
        "live seat they hold now; cleared, that seat keeps its level. 400 for another level "
        "(nothing changes)",
        schema.PersonSettings,
        schema.PersonSettings,
        errors=(400, 401, 415),
    ),
    Route(
        "status",
        "GET",
        "/api/me/stream",
        "Where the person is, then each change until seated or idle (keeps a waiting ticket alive)",
        errors=(401,),
        events="`event: status` with a Status, until `event: end`",
    ),
    Route(
        "modes",
        "GET",
        "/api/modes",
        "Every ruleset's table sizes (and the options selecting them), its presets (谋攻, a "
        "draft of generals …) and options with their defaults, the bot levels, and the table a "
        "page opens by default",
        response=schema.Modes,
        auth=False,
        errors=(503,),
    ),
    Route(
        "tables",
        "GET",
        "/api/tables",
        "A page of the open tables: newest first, joinable (a free seat) before full ones; "
        "`offset` and `limit` (1-100, default 50) page through the newest 200",
        response=schema.Tables,
        auth=False,
        errors=(400, 503),
        query=(
            Query("offset", "how many tables to skip", _int(0, 200)),
            Query("limit", "how many to list (default 50)", _int(1, 100)),
        ),
    ),
    Route(
        "create_table",
        "POST",
        "/api/tables",
        "Open a table with these settings and sit at it. `players` 1-64 (each ruleset says its "
        "sizes: /api/modes); `bot_after_ms` 0-600000, the wait before bots take the empty "
        "seats (0: bots never come: the table waits until people fill it); `time_limit_ms` 0 or "
        "2000-120000 per decision of a person (0: the engine's default, 60 s); `hosted_after` "
        "0-20 time-outs in a row before the seat goes on 托管 (0: never, and then the time "
        'limit is at most 60 s); `bot_level` one of /api/modes `bot_levels` ("": the first), '
        "which plays the bot seats and any seat on 托管",
        schema.TableSettings,
        schema.Joined,
        201,
        errors=(400, 401, 409, 415, 503),
    ),
    Route(
        "join",
        "POST",
        "/api/tables/{table}/join",
        "Sit at an open table",
        response=schema.Joined,
        errors=(401, 404, 409, 503),
    ),
    Route(
        "quickplay",
        "POST",
        "/api/quickplay",
        "Sit at an open table with these ruleset, size and options, or open one",
        schema.QuickPlay,
        schema.Joined,
        errors=(400, 401, 409, 415, 503),
    ),
    Route(
        "leave",
        "DELETE",
        "/api/me/ticket",
        "Leave the table the person waits at",
        response=schema.Me,
        errors=(401, 409, 503),
    ),
    Route(
        "seat_view",
        "GET",
        SEAT,
        "The seat's view now (own hand, role and general; every seat's public state), its "
        "pending decision with labelled options, and whether its bot plays it (托管). A dead "
        "seat's view goes on to the end (its person watches from it)",
        response=schema.SeatView,
        errors=(*SEAT_ERRORS, 409),
        query=(LANG,),
    ),
    Route(
        "seat_stream",
        "GET",
        SEAT + "/stream",
        "The seat's log entries (redacted for the seat) from `from` (or Last-Event-ID), live, "
        "each batch followed by `event: decision` when the seat's pending decision changed",
        errors=(*SEAT_ERRORS, 409),
        events=(
            "`id: N` + `data: ENTRY` per entry, N the seat's position (1, 2, 3, … over the "
            f"entries the seat receives; `from` and Last-Event-ID resume after one); ENTRY is {ENTRIES}; "
            "`event: decision` + `data: SeatMessage`; `event: end` after the last entry; "
            '`event: refused` + `data: {"error"}` if the stream must stop (the credential no '
            "longer holds the seat: the person resigned)"
        ),
        query=(
            Query("from", "the last entry already held (0: from the start)", _int(0)),
            LANG,
        ),
    ),
    Route(
        "answer",
        "POST",
        SEAT + "/answer",
        "Answer the seat's pending decision; sent twice, it is applied once (`duplicate`). "
        "409: that decision is not pending (any more), the game is over, or the person left "
        "the seat",
        schema.Answer,
        schema.Answered,
        errors=(*SEAT_ERRORS, 409, 415, 429),
    ),
    Route(
        "hosting",
        "POST",
        SEAT + "/hosted",
        "托管: let the seat's bot play it (hosted true), or take the seat back (false). The bot "
        "plays at the person's own `level` (one of /api/modes `bot_levels`; sent while on 托管 "
        "it changes the level), else at the level chosen before for this seat, else at the "
        "person's default (set_settings `hosted_level`), else at the table's; a chosen level "
        "holds for the seat's later 托管 (time-outs, resign). 400 for another level; 409 after "
        "the end, or once the person resigned",
        schema.Hosting,
        schema.Hosted,
        errors=(*SEAT_ERRORS, 409, 415),
    ),
    Route(
        "resign",
        "POST",
        SEAT + "/resign",
        "Leave the seat and the game: the person is free for the next table (`me` names no "
        "seat), and the seat's bot plays it to the end. A dead seat, or a seat of a game that "
        "is over, is simply left (nothing goes into the game's log)",
        response=schema.Hosted,
        errors=(*SEAT_ERRORS, 409),
    ),
    Route(
        "catalogue",
        "GET",
        "/api/games/{game}/catalogue",
        "Everything a client needs to name what a game's entries and decisions hold: every "
        "card id's card, the names its ruleset prints, every general with its skills, every "
        "skill's text (404 until the game has started: a table just filled starts in a moment)",
        response=schema.Catalogue,
        auth=False,
        errors=(400, 404),
    ),
    Route(
        "openapi",
        "GET",
        "/api/openapi.json",
        "This document",
        auth=False,
    ),
    # the replay server's own routes (services/replay/README.md "HTTP")
    Route(
        "games",
        "GET",
        "/api/games",
        "Live and finished games, newest first (what the lobby lists: a game leaves the live "
        "ones when it ends)",
        response=schema.GameList,
        auth=False,
        errors=(400,),
        query=(
            Query("ruleset", "only this ruleset's games", {"type": "string"}),
            Query("player", "only games this player id sat at", {"type": "string"}),
            Query("status", "live or finished", {"type": "string", "enum": ["live", "finished"]}),
            Query("since", "started at or after (ms since the epoch)", _int(0)),
            Query("until", "started before (ms since the epoch)", _int(0)),
            Query("limit", "how many (default 100)", _int(1)),
        ),
        served="replay",
    ),
    Route(
        "game",
        "GET",
        "/api/games/{game}",
        "A game's header, card table and printed names, whether it is over, and how many "
        "entries a spectator has been sent",
        response=schema.GameInfo,
        auth=False,
        errors=(400, 404),
        served="replay",
    ),
    Route(
        "events",
        "GET",
        "/api/games/{game}/events",
        "A game's entries as a viewer may see them, at once (a replay, a catch-up): the "
        "viewer's positions `from` < N <= `to` (0: to the end), held the viewer's delay "
        "behind a live game",
        response=schema.EventsPage,
        auth=False,
        errors=(400, 403, 404),
        query=(
            VIEWER,
            Query("from", "the last position already held (0: from the start)", _int(0)),
            Query("to", "the last position wanted (0: all)", _int(0)),
            DELAY,
        ),
        served="replay",
    ),
    Route(
        "stream",
        "GET",
        "/api/games/{game}/stream",
        "A game's entries as a viewer may see them, live (a spectator's table)",
        errors=(400, 403, 404),
        events=(
            f"`id: N` + `data: ENTRY` per entry (N the viewer's position; ENTRY is {ENTRIES}); "
            '`event: decision` + `data: {"version", "seat", "kind"}` (the public pending '
            "decision: the active seat playing, discarding or choosing targets; a draft) or "
            '`{"version"}` (nothing public is pending); `event: end` after the last entry'
        ),
        query=(
            VIEWER,
            Query("from", "the last position already held (Last-Event-ID too)", _int(0)),
            DELAY,
        ),
        served="replay",
    ),
    Route(
        "verify",
        "GET",
        "/api/games/{game}/verify",
        "Verify a game: its hash chain, its seed against the commitment, a full re-run of its "
        "answers through the rules, and (an archive) the platform's signature",
        response=schema.VerifyReport,
        auth=False,
        errors=(400, 404),
        served="replay",
    ),
    Route(
        "platform_key",
        "GET",
        "/api/platform-key",
        "The public key the platform signs its archives with",
        response=schema.PlatformKey,
        auth=False,
        errors=(404,),
        served="replay",
    ),
]
# the Bot API's, the tournaments' (their own routers), the chart's and TV's (the replay server's):
# one document (services/play/watchroutes.py)
from .watchroutes import STREAM_TYPES as WATCH_STREAM_TYPES  # noqa: E402
from .watchroutes import extra_routes  # noqa: E402

ROUTES += extra_routes(Route, Query)
BY_NAME = {r.name: r for r in ROUTES}


def match(route: Route, path: str) -> dict[str, str] | None:
    """The path parameters if `path` is this route's path, else None."""
    want = route.path.strip("/").split("/")
    got = path.strip("/").split("/")
    if len(want) != len(got):
        return None
    params = {}
    for w, g in zip(want, got, strict=True):
        if w.startswith("{"):
            if not g:
                return None
            params[w[1:-1]] = g
        elif w != g:
            return None
    return params


_PARAMS = {
    "game": ("a game id ([A-Za-z0-9_.-], 1–100)", {"type": "string"}),
    "seat": ("a seat number", {"type": "integer", "minimum": 0}),
    "table": ("an open table's id", {"type": "string"}),
    "key": ("a tournament's key (16 hex digits)", {"type": "string"}),
}


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the play API."""
    types: list[type] = [schema.Error, schema.Status, schema.Waits]
    types += schema.STREAM_TYPES  # the seat stream's bodies (described in its `events`)
    types += WATCH_STREAM_TYPES
    for r in ROUTES:
        types += [t for t in (r.body, r.response) if t is not None]
    _, components = msgspec.json.schema_components(
        sorted(set(types), key=lambda t: t.__name__), ref_template="#/components/schemas/{name}"
    )
    paths: dict[str, dict[str, Any]] = {}
    for r in ROUTES:
        op: dict[str, Any] = {"operationId": r.name, "summary": r.summary}
        params = [
            {
                "name": n,
                "in": "path",
                "required": True,
                "description": _PARAMS[n][0],
                "schema": _PARAMS[n][1],
            }
            for n in _PARAMS
            if "{" + n + "}" in r.path
        ]
        params += [
            {"name": q.name, "in": "query", "required": False, "description": q.about}
            | {"schema": q.schema}
            for q in r.query
        ]
        if params:
            op["parameters"] = params
        if r.body is not None:
            op["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": _ref(r.body)}},
            }
        if r.response is not None:
            ok: dict[str, Any] = {
                "description": r.response.__doc__.split("\n")[0] if r.response.__doc__ else "OK",
                "content": {"application/json": {"schema": _ref(r.response)}},
            }
        elif r.media:
            ok = {"description": "OK", "content": {r.media: {"schema": {"type": "string"}}}}
        elif r.events:
            ok = {
                "description": f"Server-Sent Events: {r.events}",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        else:
            ok = {"description": "OK", "content": {"application/json": {"schema": {}}}}
        codes = set(r.errors)
        if r.method != "GET":
            codes.add(403)  # a request from another site's page (CSRF: http.same_origin)
        if r.name in LIMITED:
            codes.add(429)
        op["responses"] = {str(r.status): ok} | {
            str(code): {
                "description": ERRORS[code],
                "content": {"application/json": {"schema": _ref(schema.Error)}},
            }
            | (RETRY_AFTER if code == 429 else {})
            for code in sorted(codes)
        }
        if r.auth is True:
            op["security"] = [{"cookie": []}, {"bearer": []}]
        elif r.auth:  # a credential of its own (the Bot API's, an organiser's)
            op["security"] = [{r.auth: []}]
        paths.setdefault(r.path, {})[r.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {
            "title": TITLE,
            "version": VERSION,
            "description": DESCRIPTION,
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "cookie": {"type": "apiKey", "in": "cookie", "name": COOKIE},
                "bearer": {"type": "http", "scheme": "bearer"},
                "bot": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a bot account's token, bot_… (docs/botapi.md)",
                },
                "organiser": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "an organiser token, org_… (arena organiser-token create)",
                },
            },
        },
    }


def _ref(t: type) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{t.__name__}"}


DESCRIPTION = f"""People play Arena's games: sit down as a guest, open or join a table, follow
the seat's view and answer its decisions (services/play/README.md); spectators and replays read
the same games (the routes of the replay server: games, game, events, stream, verify).

Limits (429 with Retry-After past them; counted in Redis, so across server processes):
new guests {GUESTS_PER_ADDRESS.calls} per client address per {GUESTS_PER_ADDRESS.seconds // 60}
minutes; tables opened, joined or quick-played {SEATS_PER_GUEST.calls} per guest and
{SEATS_PER_ADDRESS.calls} per address a minute; answers {DEFAULT_ANSWERS_PER_S} a second per
seat (the server's --answers-per-s); one open table per guest at a time (409). A request whose
head and body have not arrived in 10 s is dropped (408); a body is at most 64 KiB (413).

Numbers a viewer reads are its own positions (1, 2, 3, … over the entries it receives);
decision ids are opaque. Bounds of a table's settings and what 0 means: see create_table."""
LIMITED = ("new_guest", "create_table", "join", "quickplay", "answer")
"""Routes with a rate limit (services/play/ratelimit.py): 429 with Retry-After past it."""
RETRY_AFTER = {
    "headers": {
        "Retry-After": {
            "description": "seconds until the limit's window ends (creation limits)",
            "schema": {"type": "integer", "minimum": 1},
        }
    }
}

ERRORS = {
    400: "Malformed or illegal (an answer that is not legal now: the reason says why)",
    401: "No valid credential",
    403: "Not the person's seat; or a state-changing request from another site's page (its "
    "Origin or Sec-Fetch-Site says so: CSRF)",
    404: "No such game, table or seat",
    408: "The request's head and body did not arrive within 10 s",
    409: "Not now (already seated or waiting, the decision is not pending, the game is over, "
    "the person left that seat)",
    411: "A body without a Content-Length",
    413: "A body over 64 KiB",
    415: "The body must be application/json",
    429: "Too many requests: answers for this seat (over --answers-per-s), or guests, tables "
    "and tickets created from this address or by this guest (Retry-After says when to try "
    "again)",
    503: "The engine or the matchmaker cannot be reached",
}
