"""A route of the tables served beside the play API's (the Bot API's: botroutes.py; the
tournaments': tournamentroutes.py), kept in a module of its own so routes.py can list them for
its OpenAPI document without importing their routers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec


@dataclass(frozen=True)
class Param:
    """A query parameter: its name, what it means, its JSON Schema."""

    name: str
    about: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class ApiRoute:
    """One route of such a table: as routes.py's (the play API's table lists these too, for its
    OpenAPI document), with the bearer credential it takes (``auth``: ``bot``, ``organiser``,
    or ``""``: none) and, for a body that is not JSON, its media type."""

    name: str
    method: str
    path: str
    summary: str
    body: type[msgspec.Struct] | None = None
    response: type[msgspec.Struct] | None = None
    status: int = 200
    auth: str = ""
    errors: tuple[int, ...] = ()
    events: str = ""
    query: tuple[Param, ...] = ()
    media: str = ""
