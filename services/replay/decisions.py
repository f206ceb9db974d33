"""The public pending decision of live games, asked of an engine worker.

Decisions are not in the log (only the answers are), so the replay server asks an engine worker
(``GameService.GetDecision`` as a spectator: no seat token, so no options and no info come back)
after each batch of entries; what a viewer is then shown of it, and when, is the read side's
rule (services/readside/decisions.py, readside/feed.py `decision_for`): only the public kinds,
only to a viewer with no delay, only at the position it belongs to.
"""

from __future__ import annotations

from typing import Any

from ..readside.decisions import Pending


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
