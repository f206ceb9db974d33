"""The pending decision as each viewer may see it.

Decisions are not in the log (only the answers are): the engine holds the one pending decision,
and every channel shows it through here.

* Who may learn that a decision is pending at all: the rules decide (api.decision_visible). The
  engine never asks a seat that has no legal answer, so being asked can give a hand away (a
  无懈可击 prompt says the seat holds one, a 闪 prompt that it holds a 闪 or a skill that makes
  one). Other viewers see only the public kinds: ``play``, ``discard`` and ``targets`` of the
  seat whose turn it is (the play phase always asks, the discard count follows from public
  counts, targets follow a use everyone is about to see) and ``draft`` (every seat drafts).
  Everything else is withheld entirely, seat included: "waiting for seat N" at the moment a
  trick was used is itself the 无懈可击 tell.
* What a viewer sees of it: the deciding seat gets everything (options, bounds, info); any other
  viewer gets who is asked and the kind, nothing else (a targets decision's ``max`` is its card's
  target count, a hint at a card that may go back into the hand unseen).
* When: only a viewer with no delay (it is live: a delayed viewer would see it ahead of the
  events it follows), and only at the position it belongs to (``version``: the viewer's
  position after the last entry before the decision).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from ..rules import api


@dataclass(frozen=True)
class Pending:
    """The public part of a pending decision: the position it is pending at (a spectator's,
    positions.py), the seat asked and the kind (never options or info)."""

    version: int
    seat: int
    kind: str


@dataclass(frozen=True)
class Shown:
    """A pending decision as one viewer may see it (see the module docstring): ``mine`` for the
    deciding seat, which alone gets the options, bounds and info. ``id`` is the decision's
    opaque id (contracts/decision_ids.py), ``version`` the viewer's position it is pending at,
    ``deadline_ms`` when the server answers it by default (0: a bot answers it, or unknown)."""

    id: int
    seat: int
    kind: str
    version: int
    mine: bool
    options: list[str] = field(default_factory=list)
    min: int = 0
    max: int = 0
    declinable: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    deadline_ms: int = 0

    @property
    def public(self) -> Pending:
        """What a spectator at the same position would be shown of it."""
        return Pending(self.version, self.seat, self.kind)


def may_see(kind: str, seat: int, active: int, viewer: int) -> bool:
    """Whether ``viewer`` may learn that ``seat`` is asked a ``kind`` decision now (``active``:
    the seat whose turn it is); the rules' one secrecy owner decides."""
    return api.decision_visible(kind, seat, active, viewer)


def shown(
    d: api.Decision,
    viewer: int,
    active: int,
    *,
    id: int,
    version: int,
    deadline_ms: int = 0,
) -> Shown | None:
    """``d`` as ``viewer`` may see it at its position ``version``, or None when the viewer may
    not learn it is pending; ``id`` is its opaque id."""
    if not may_see(d.kind, d.seat, active, viewer):
        return None
    if viewer != d.seat:
        return Shown(id, d.seat, d.kind, version, False, deadline_ms=deadline_ms)
    return Shown(
        id,
        d.seat,
        d.kind,
        version,
        True,
        list(d.options),
        d.min,
        d.max,
        d.declinable,
        dict(d.info),
        deadline_ms,
    )


def public_json(p: Pending, version: int) -> bytes:
    """A public decision's JSON for a viewer at its position ``version``:
    ``{"version","seat","kind"}``."""
    return b'{"version":%d,"seat":%d,"kind":"%s"}' % (version, p.seat, p.kind.encode())


def cleared_json(version: int) -> bytes:
    """``{"version": V}``: nothing public is pending after the viewer's position V (sent once a
    decision was shown and then answered by an answer withheld from the viewer)."""
    return b'{"version":%d}' % version


class DecisionSource(Protocol):
    """Where the public pending decision of a live game comes from (the engine, asked as a
    spectator: it sends no options or info)."""

    async def pending(self, game: str) -> Pending | None:
        """The decision pending now; None if there is none (over, unknown game). Raises when the
        source cannot answer (the caller retries)."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True)
class Asked:
    """What the engine says is pending, as one seat may see it: the seat's position the game is
    at, and the decision if the seat may know of it (its own, or another seat's public one)."""

    version: int
    decision: Shown | None
    over: bool = False


class SeatDecisions(Protocol):
    """Where a seat's pending decision comes from (the engine, asked with the seat's token)."""

    async def pending(self, game: str, token: str) -> Asked:
        """The decision pending now as the token's seat may see it. Raises Refused when the
        engine cannot say (NOT_FOUND: it no longer holds the game)."""
        ...


class Mark(msgspec.Struct, array_like=True, frozen=True):
    """What the engine says is pending after an append of a game a person sits at, written
    beside the append's last entry (its field ``p``: services/eventlog/appends.py), so that a
    person's seat stream learns what another seat is asked without asking the engine after
    every bot move (issue 44: a third of the web server's gRPC time). Only trusted services
    read it (it is in Redis and the web server, which hold every seat's secrets anyway); what
    a viewer is shown of it is `asked_from`, exactly what the engine's GetDecision would say:
    the deciding seat is told nothing here (its options come from the engine)."""

    seat: int  # the seat asked
    kind: str
    active: int  # the seat whose turn it is (who may learn of it: `may_see`)
    id: int  # the decision's opaque id
    deadline_ms: int = 0  # when the server answers it by default (0: a bot answers it)


_MARK = msgspec.msgpack.Decoder(Mark)
_MARKS = msgspec.msgpack.Encoder()


def mark_bytes(mark: Mark) -> bytes:
    """A mark as the log keeps it."""
    return _MARKS.encode(mark)


def read_mark(data: bytes) -> Mark | None:
    """The mark in ``data``; None if it is none (written by another version, damaged)."""
    try:
        return _MARK.decode(data)
    except msgspec.MsgspecError:
        return None


def asked_from(mark: Mark, viewer: int, position: int) -> Asked | None:
    """What seat ``viewer`` is told is pending at its position ``position`` (that of the entry
    the mark stands beside), as the engine's GetDecision would tell it (`shown`); None when it
    is the viewer's own decision: its options, bounds and info come from the engine."""
    if mark.seat == viewer:
        return None
    if not may_see(mark.kind, mark.seat, mark.active, viewer):
        return Asked(position, None)
    return Asked(
        position,
        Shown(mark.id, mark.seat, mark.kind, position, False, deadline_ms=mark.deadline_ms),
    )
