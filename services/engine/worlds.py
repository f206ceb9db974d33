"""Worlds for a bot's look-ahead: GameService.Determinize (see proto/arena/v1/game.proto).

The ``hard`` level plays the heuristic and checks its key decisions by playing candidates out in
*worlds*: full game states its seat could be in (services/bots/search.py). A bot worker holds
only its seat's view, so the engine, which holds the state, deals them:

1. the seat's view, folded from the log's events redacted for that seat (`SeatViews`: kept per
   game beside the hot state and folded on from where it was; rebuilt from the log after a
   reload, so nothing lives only in this worker's memory);
2. `deal`: one ``api.determinize`` per requested world, from its seed and its role guesses, with
   the pending decision numbered by the opaque id the seat was shown.

What a world holds depends only on what the seat may know and on the request
(services/rules/determinize.py says how; tests/rules/test_determinize.py checks it over many
states, tests/secrecy/test_noninterference.py over real gRPC), so a world tells the bot worker
nothing its seat's own view does not (tests/engine/test_worlds.py: who may ask, what comes back). Who may ask is checked by the caller (`Games.determinize`): a
bot's token, for a seat a bot plays now, at that seat's pending decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import BadRequest
from ..eventlog.entry import decode_entry
from ..eventlog.store import Record
from ..readside.fold import SeatFold
from ..rules import api

MAX_WORLDS = 16  # per call: the hard policy asks for 8 by default
MAX_ROLE_LEN = 32


@dataclass(frozen=True)
class World:
    """One world asked for: its seed, and a guess of the role of seats whose role is hidden."""

    seed: int
    roles: Mapping[int, str]


def checked(worlds: Sequence[World], players: int) -> list[World]:
    """The worlds of a request, or BadRequest (nothing dealt)."""
    if not 1 <= len(worlds) <= MAX_WORLDS:
        raise BadRequest(f"ask for 1 to {MAX_WORLDS} worlds, not {len(worlds)}")
    for w in worlds:
        for seat, role in w.roles.items():
            if not 0 <= seat < players:
                raise BadRequest(f"a role guess for seat {seat} of a {players}-seat game")
            if len(role) > MAX_ROLE_LEN:
                raise BadRequest(f"a role guess longer than {MAX_ROLE_LEN} characters")
    return list(worlds)


@dataclass
class SeatViews:
    """Seats' views of one game (the read side's fold, services/readside/fold.py), each folded
    up to a log version."""

    folds: dict[int, SeatFold] = field(default_factory=dict)

    def behind(self, seat: int) -> int:
        """The log version ``seat``'s view is folded up to (0: not begun)."""
        got = self.folds.get(seat)
        return got.at if got is not None else 0

    def fold(self, seat: int, records: Sequence[Record], upto: int) -> api.View:
        """``seat``'s view after folding ``records`` (the log's entries after `behind(seat)`, up
        to version ``upto``), each event redacted for the seat as every channel sends it."""
        fold = self.folds.get(seat)
        if fold is None:
            fold = self.folds[seat] = SeatFold(seat, f"worlds seat {seat}")
        for seq, data in records:
            fold.entry(seq, decode_entry(data))
        fold.at = max(fold.at, upto)
        return fold.view


def deal(
    game: api.Game, seat: int, view: api.View, number: int, worlds: list[World]
) -> list[bytes]:
    """Each world's state as ``api.snapshot`` bytes: ``game`` determinized for ``seat`` (whose
    ``view`` it is) from the world's seed, each guessed role taken as certain, the pending
    decision numbered ``number``."""
    out: list[bytes] = []
    for w in worlds:
        guess = {s: {r: 1.0} for s, r in w.roles.items()}
        world = api.determinize(game, seat, guess, w.seed, view=view, number=number)
        out.append(api.snapshot(world))
    return out
