"""The pending decision on the live table: asked of the engine, cut down to what is public.

Decisions are not in the log (only the answers are), so the replay server asks an engine worker
(``GameService.GetDecision`` as a spectator: no seat token, so no options and no info come back)
after each batch of entries, and passes on at most ``{"version", "seat", "kind"}``.

Who may see that a decision is pending, and of what kind: the engine never asks a seat that has
no legal answer, so merely being asked can give a hand away (a 无懈可击 prompt says the seat
holds one, a 闪 prompt that it holds a 闪 or a skill that makes one). So a decision goes out only
when its existence is public anyway:

- ``play``, ``discard``, ``targets`` of the seat whose turn it is (the last ``turn_started``):
  the play phase always asks, the discard phase's count follows from the public hand count and
  HP, and targets follow a use everyone is about to see;
- ``draft``: every seat picks a general.

Every other decision (``respond``, ``confirm``, ``choose``, ``cards``, ``pick_card``, and any kind
asked of a seat other than the active one) is withheld entirely, seat included: "waiting for seat
N" at the moment a trick was used is itself the 无懈可击 tell. Nor is the decision id passed on:
gaps between ids would count the hidden prompts.

Only viewers with no delay get decisions (the decision is live; a delayed viewer must not see it
ahead of the events it follows), and only when it belongs to the last entry the viewer has.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from ..rules.api import SPECTATOR, decision_visible

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pending:
    """A pending decision as the engine shows a spectator: the version it is pending at (in a
    spectator's positions: eventlog/positions.py), the seat asked and the kind (never options
    or info)."""

    version: int
    seat: int
    kind: str


class DecisionSource(Protocol):
    """Where the pending decision of a live game comes from."""

    async def pending(self, game: str) -> Pending | None:
        """The decision pending now; None if there is none (over, unknown game). Raises when the
        source cannot answer (the caller retries)."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


def is_public(p: Pending, active_seat: int) -> bool:
    """Whether spectators may know that ``p`` is pending (the rules' one secrecy owner decides:
    services.rules.api.decision_visible)."""
    return decision_visible(p.kind, p.seat, active_seat, SPECTATOR)


def public_json(p: Pending, active_seat: int) -> bytes | None:
    """The decision as a spectator receives it, or None when it must not be shown."""
    if not is_public(p, active_seat):
        return None
    return decision_json(p, p.version)


def decision_json(p: Pending, version: int) -> bytes:
    """A public decision's JSON for a viewer at its position ``version``."""
    return b'{"version":%d,"seat":%d,"kind":"%s"}' % (version, p.seat, p.kind.encode())


class EngineDecisions:
    """``GameService.GetDecision`` on one engine address (any worker serves any game), called
    without a seat token: the engine itself then leaves options and info out."""

    def __init__(self, address: str, timeout_s: float = 2.0) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self._channel: Any = None
        self._stub: Any = None

    async def pending(self, game: str) -> Pending | None:
        """See DecisionSource.pending."""
        import grpc

        from ..proto_gen.arena.v1 import game_pb2, game_pb2_grpc

        if self._stub is None:
            self._channel = grpc.aio.insecure_channel(self.address)
            self._stub = game_pb2_grpc.GameServiceStub(self._channel)  # type: ignore[no-untyped-call]
        try:
            r = await self._stub.GetDecision(
                game_pb2.GetDecisionRequest(game_id=game), timeout=self.timeout_s
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                return None  # not an engine game (a demo), or archived and gone
            raise
        if r.over or not r.HasField("decision"):
            return None
        d = r.decision
        return Pending(int(d.version or r.version), int(d.seat), str(d.kind))

    async def close(self) -> None:
        """See DecisionSource.close."""
        if self._channel is not None:
            await self._channel.close()
            self._channel = self._stub = None
