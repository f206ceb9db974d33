"""The tournaments' bodies (tournaments.py), typed once for the server and the OpenAPI document."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from ..contracts.streams import OptionValue


class NewTournament(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A tournament to create (organisers): its table (ruleset, size, options), its entrants
    (built-in policies `heuristic` `random` `easy` `hard`, bot accounts `b-…`, people `g-…`), how
    many games (game i dealt with seed `seed` + i), how entrants take seats (`seat`: rotating;
    `camp`: whole camps share a policy), the clock of bot accounts and people, and how many of
    the platform's engine workers to keep busy (0: all of them)."""

    name: Annotated[str, msgspec.Meta(max_length=80)] = ""
    ruleset: str
    players: Annotated[int, msgspec.Meta(ge=1, le=64)]
    options: dict[str, OptionValue] = {}
    entrants: Annotated[list[str], msgspec.Meta(min_length=1, max_length=64)]
    games: Annotated[int, msgspec.Meta(ge=1, le=100_000)]
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**31)] = 1
    assign: Literal["seat", "camp"] = "seat"
    engines: Annotated[int, msgspec.Meta(ge=0, le=64)] = 0
    time_limit_ms: Annotated[int, msgspec.Meta(ge=2_000, le=120_000)] = 15_000
    hosted_after: Annotated[int, msgspec.Meta(ge=0, le=20)] = 2


class Entrant(msgspec.Struct, kw_only=True):
    """An entrant: its id (a policy's name, a bot's or a person's player id), `policy`, `bot`
    or `person`, and the name shown."""

    id: str
    kind: str
    name: str


class TournamentSummary(msgspec.Struct, kw_only=True):
    """A tournament at a glance: what it plays, how far it is, whether a process plays it now
    (`running`), who plays it (`host`: the web server, or `arena tournament`), its page."""

    key: str
    name: str
    organiser: str
    created_ms: int
    host: str
    ruleset: str
    players: int
    games: int
    done: int
    running: bool
    stopped: bool
    entrants: list[Entrant]
    page: str  # the page's path: /#/tournament/KEY


class Tournaments(msgspec.Struct):
    """Every tournament of the server's folder, newest first."""

    tournaments: list[TournamentSummary]


class GameRow(msgspec.Struct, kw_only=True):
    """A finished game of the tournament: its number and id (its replay:
    `/#/replay/GAME`), the entrant and role of each seat, the winning seats, whether a draw."""

    i: int
    game: str
    seats: list[str]
    roles: list[str]
    winners: list[int]
    draw: bool


class Tournament(msgspec.Struct, kw_only=True):
    """A tournament in full: the summary, its spec, its standings (per camp with 95% intervals,
    per entrant, per entrant and role or camp, openskill ratings), every finished game, and the
    games being played now (their live tables: `/#/live/GAME`)."""

    summary: TournamentSummary
    spec: dict[str, Any]
    standings: dict[str, Any]
    results: list[GameRow]
    live: list[str]
