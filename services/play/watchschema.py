"""The bodies of the win-chance chart (`GET /api/games/{game}/chart`, readside/chart.py) and of
TV (`GET /api/tv`, replay/tv.py), typed for the OpenAPI document (the replay server sends them;
tests decode what it sends with these)."""

from __future__ import annotations

from typing import Literal

import msgspec


class ChartCamp(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A camp: its key (the ruleset's camp, a role playing alone, or `seatN` in a game without
    roles) and a role of it, to name it (the lord's side: `lord`)."""

    key: str
    role: str


class ChartMoment(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """A key moment at the viewer's position `seq`: a `death` (the seat, the role it showed), a
    role shown after the deal (`reveal`), one of the largest `swing`s (the camp, by how much),
    the `end` (the winning seats, or a draw)."""

    seq: int
    kind: Literal["death", "reveal", "swing", "end"]
    seat: int | None = None
    role: str | None = None
    camp: str | None = None
    delta: float | None = None
    winners: list[int] | None = None
    draw: bool | None = None


class Chart(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Each camp's chance to win, move by move: `points` are [position, chance of each camp in
    `camps` order], one where a chance changed; positions are the viewer's own. `model`:
    `public` (a live game: from what a spectator sees, held the viewer's delay behind), `full`
    (a finished game: the whole log), or `hand-set` (no model fitted for this table). `upto`:
    the last position it covers."""

    game: str
    model: Literal["public", "full", "hand-set"]
    camps: list[ChartCamp]
    points: list[list[float]]
    moments: list[ChartMoment]
    upto: int
    over: bool


class TvCandidate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A live game TV looked at: seats alive, the likeliest camp's lead on its chart, moves so
    far (spectator positions), each camp's chance."""

    game: str
    ruleset: str
    players: int
    alive: int
    lead: float
    moves: int
    camps: list[str]
    chances: list[float]


class Tv(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The featured live game (null: none is being played), the rule that chose it, the games
    it was chosen among (best first)."""

    game: str | None
    rule: str
    candidates: list[TvCandidate]
