"""Who may watch what, and how far behind: viewers, table policies, seat tokens, grants, delay.

The rules (ARCHITECTURE "Replay and spectating"), the same on every channel:

* once a game is over (``game_ended`` or the seed reveal is in the log) every viewer is allowed,
  with no delay: nothing secret is left to protect;
* a spectator of a live game is held at least the table's spectator delay behind it;
* the god view (every hand) of a live game only when the table allows it, and then at least its
  god delay behind; otherwise it opens when the game ends;
* a seat's own view of a live game only with a seat token for that game and seat, live.

Delays count from each entry's append time (the store keeps it beside the entry: Redis TIME in
the append script), measured on the same clock (clock.py: ServerClock), so a delayed viewer is
held exactly the delay behind the append on every replica and after any restart.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..contracts import tokens
from ..errors import BadRequest as BadRequest  # the refusals of services/errors.py,
from ..errors import Forbidden as Forbidden  # re-exported for the read side's callers
from ..errors import NotFound as NotFound
from ..rules.api import GOD, SPECTATOR


@dataclass(frozen=True)
class TablePolicy:
    """A table's spectating rules. ``god_delay_ms`` None: the god view opens only at the end."""

    spectator_delay_ms: int = 0
    god_delay_ms: int | None = None


@dataclass(frozen=True)
class Grant:
    """What a request may receive: entries redacted for ``viewer``, ``delay_ms`` behind."""

    viewer: int
    delay_ms: int

    @property
    def live(self) -> bool:
        """Whether the viewer watches with no delay, so it may be shown the pending decision
        (a delayed viewer would see the decision ahead of the events it follows)."""
        return self.delay_ms <= 0


SeatCheck = Callable[[str, int, str], bool]
"""(game, seat, token) -> whether the token lets its holder see that seat of that game."""


def hmac_seat_check(secret: bytes) -> SeatCheck:
    """A SeatCheck backed by the HMAC seat tokens of services/contracts/tokens.py."""

    def check(game: str, seat: int, token: str) -> bool:
        try:
            claims = tokens.verify(secret, token)
        except tokens.BadToken:
            return False
        return claims.g == game and claims.s == seat

    return check


def no_seats(game: str, seat: int, token: str) -> bool:
    """A SeatCheck that opens no seat (a server with no secret to check tokens with)."""
    return False


def parse_viewer(text: str | None) -> int:
    """``spectator`` (default), ``god`` or a seat number; -1 and -2 as in the rules' views."""
    if text is None or text in ("", "spectator"):
        return SPECTATOR
    if text == "god":
        return GOD
    try:
        viewer = int(text)
    except ValueError:
        raise BadRequest(
            f"viewer must be a seat number, 'spectator' or 'god', not {text!r}"
        ) from None
    if viewer < GOD:
        raise BadRequest(f"no viewer {viewer}")
    return viewer


def delay_for(policy: TablePolicy, viewer: int, over: bool, asked_ms: int = 0) -> int:
    """How far behind the live game ``viewer`` is held (``asked_ms``: a delay the viewer asked
    for itself); Forbidden for the god view of a live game its table keeps closed. The seat's
    token is the caller's to have checked (`authorize`)."""
    if asked_ms < 0:
        raise BadRequest("delay must not be negative")
    if over:
        return asked_ms
    if viewer == SPECTATOR:
        return max(asked_ms, policy.spectator_delay_ms)
    if viewer == GOD:
        if policy.god_delay_ms is None:
            raise Forbidden("the god view opens when the game has ended")
        return max(asked_ms, policy.god_delay_ms, policy.spectator_delay_ms)
    return asked_ms


def authorize(
    game: str,
    policy: TablePolicy,
    over: bool,
    players: int,
    viewer: int,
    token: str | None,
    delay_ms: int,
    seat_check: SeatCheck,
) -> Grant:
    """The grant for ``viewer`` asking for ``game`` ``delay_ms`` behind; raises Forbidden (a
    seat's view of a live game without that seat's token, a closed god view), BadRequest."""
    if delay_ms < 0:
        raise BadRequest("delay must not be negative")
    if viewer >= players:
        raise BadRequest(f"no seat {viewer} in a {players}-player game")
    if viewer >= 0 and not over and (not token or not seat_check(game, viewer, token)):
        raise Forbidden(f"seat {viewer}'s view needs that seat's token")
    return Grant(viewer, delay_for(policy, viewer, over, delay_ms))


def released(at_ms: Sequence[int], delay_ms: int, now_ms: int) -> int:
    """How many of the entries appended at ``at_ms`` (non-decreasing) a viewer ``delay_ms``
    behind may have at ``now_ms``."""
    if delay_ms <= 0:
        return len(at_ms)
    return bisect.bisect_right(at_ms, now_ms - delay_ms)
