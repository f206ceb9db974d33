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

COOKIE = "arena_session"
TITLE = "Arena play API"
VERSION = "1"


@dataclass(frozen=True)
class Route:
    """One route. `response` None: a Server-Sent Events stream, described by `events`."""

    name: str
    method: str
    path: str
    summary: str
    body: type[msgspec.Struct] | None = None
    response: type[msgspec.Struct] | None = None
    status: int = 200
    auth: bool = True
    errors: tuple[int, ...] = ()
    events: str = ""


SEAT = "/api/games/{game}/seats/{seat}"
SEAT_ERRORS = (400, 401, 403, 404, 503)
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
        "Who the credential belongs to, and where: waiting at a table, seated, or neither",
        response=schema.Me,
        errors=(401,),
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
        "Every ruleset's table sizes (and the options selecting them) and the bot levels",
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
        errors=(503,),
    ),
    Route(
        "create_table",
        "POST",
        "/api/tables",
        "Open a table with these settings and sit at it",
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
        "pending decision with labelled options, and whether its bot plays it (托管)",
        response=schema.SeatView,
        errors=SEAT_ERRORS,
    ),
    Route(
        "seat_stream",
        "GET",
        SEAT + "/stream",
        "The seat's log entries (redacted for the seat) from `from` (or Last-Event-ID), live, "
        "each batch followed by `event: decision` when the seat's pending decision changed",
        errors=SEAT_ERRORS,
        events=(
            "`id: N` + `data: ENTRY` per entry, N the seat's position (1, 2, 3, … over the "
            "entries the seat receives; `from` and Last-Event-ID resume after one); ENTRY is "
            "one of the schemas HeaderEntry, EventEntry, AnswerEntry, RevealEntry, ControlEntry, "
            "OtherEntry (told apart by `kind`; every channel sends the same); "
            "`event: decision` + `data: SeatMessage`; `event: end` after the last entry; "
            '`event: refused` + `data: {"error"}` if the stream must stop (the credential no '
            "longer holds the seat)"
        ),
    ),
    Route(
        "answer",
        "POST",
        SEAT + "/answer",
        "Answer the seat's pending decision; sent twice, it is applied once (`duplicate`)",
        schema.Answer,
        schema.Answered,
        errors=(*SEAT_ERRORS, 409, 415, 429),
    ),
    Route(
        "hosting",
        "POST",
        SEAT + "/hosted",
        "托管: let the seat's bot play it (hosted true), or take the seat back (false)",
        schema.Hosting,
        schema.Hosted,
        errors=(*SEAT_ERRORS, 409, 415),
    ),
    Route(
        "resign",
        "POST",
        SEAT + "/resign",
        "Leave the game: the seat's bot plays it to the end",
        response=schema.Hosted,
        errors=(*SEAT_ERRORS, 409),
    ),
    Route(
        "openapi",
        "GET",
        "/api/openapi.json",
        "This document",
        auth=False,
    ),
]
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
}


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the play API."""
    types: list[type[msgspec.Struct]] = [schema.Error, schema.Status, schema.Waits]
    types += schema.STREAM_TYPES  # the seat stream's bodies (described in its `events`)
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
        if r.name == "tables":
            params += [
                {
                    "name": n,
                    "in": "query",
                    "required": False,
                    "description": d,
                    "schema": {"type": "integer", "minimum": lo, "maximum": hi},
                }
                for n, d, lo, hi in (
                    ("offset", "how many tables to skip", 0, 200),
                    ("limit", "how many to list (default 50)", 1, 100),
                )
            ]
        if r.name == "seat_stream":
            params.append(
                {
                    "name": "from",
                    "in": "query",
                    "required": False,
                    "description": "the last entry already held (0: from the start)",
                    "schema": {"type": "integer", "minimum": 0},
                }
            )
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
        if r.auth:
            op["security"] = [{"cookie": []}, {"bearer": []}]
        paths.setdefault(r.path, {})[r.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {
            "title": TITLE,
            "version": VERSION,
            "description": "People play Arena's games: sit down as a guest, open or join a "
            "table, follow the seat's view and answer its decisions (services/play/README.md).",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "cookie": {"type": "apiKey", "in": "cookie", "name": COOKIE},
                "bearer": {"type": "http", "scheme": "bearer"},
            },
        },
    }


def _ref(t: type) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{t.__name__}"}


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
    409: "Not now (already seated or waiting, the decision is not pending, the game is over)",
    411: "A body without a Content-Length",
    413: "A body over 64 KiB",
    415: "The body must be application/json",
    429: "Too many requests: answers for this seat (over --answers-per-s), or guests, tables "
    "and tickets created from this address or by this guest (Retry-After says when to try "
    "again)",
    503: "The engine or the matchmaker cannot be reached",
}
