"""The Bot API's own bodies (the seat's view, stream, decisions and answers are the play API's:
schema.py), typed once for the server and the OpenAPI document."""

from __future__ import annotations

import msgspec

from .schema import Waiting


class NewBotAccount(msgspec.Struct, forbid_unknown_fields=True):
    """A bot account to issue: the name shown at its tables (1–32 characters, shown as text)."""

    name: str


class BotAccount(msgspec.Struct, kw_only=True):
    """A bot account: its player id (seats, ratings and tournaments name it), its name, the
    organiser (or operator) who issued it, when."""

    player: str
    name: str
    owner: str
    created_ms: int


class IssuedBot(msgspec.Struct, kw_only=True):
    """A bot account just issued, with its token: shown this once (the server keeps only its
    hash). The bot sends it as `Authorization: Bearer TOKEN`."""

    player: str
    name: str
    token: str


class BotAccounts(msgspec.Struct):
    """The newest bot accounts (what a tournament may enter)."""

    bots: list[BotAccount]


class Organiser(msgspec.Struct):
    """Who an organiser token belongs to."""

    name: str


class BotSeat(msgspec.Struct, kw_only=True):
    """A seat the bot holds: which game and seat, and whether that game is over."""

    game: str
    seat: int
    over: bool = False


class Rating(msgspec.Struct, kw_only=True):
    """A rating in one mode (`RULESET-PLAYERS`): openskill mu and sigma, the leaderboard's
    ordinal (mu - 3 sigma), games rated."""

    mu: float
    sigma: float
    ordinal: float
    games: int


class BotMe(msgspec.Struct, kw_only=True):
    """The bot the token belongs to: its seats in live games, the table it waits at, its
    ratings by mode (rated like a person's: every finished game it sat in)."""

    player: str
    name: str
    seats: list[BotSeat]
    waiting: Waiting | None = None
    ratings: dict[str, Rating] = {}


class BotSeats(msgspec.Struct):
    """The seats the bot holds in games not over yet (from its inbox: the newest 1,000)."""

    seats: list[BotSeat]


class SeatNotice(msgspec.Struct, kw_only=True):
    """`event: seated` of `GET /api/bot/events`: the bot now sits at `seat` of `game` (open the
    seat's stream to play it)."""

    game: str
    seat: int
