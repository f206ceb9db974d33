"""The bot worker's port to the engine: submit an answer, read the seat's redacted log.

`Engine` is what the worker's logic needs; `GrpcEngine` is the adapter over GameService (tests
also drive the logic through an in-process adapter). Failures are `EngineError(code, reason)`
with `code` a grpc.StatusCode name, so the logic never imports grpc.

Every entry a bot folds comes from GameService.StreamView with the seat's token: the engine
redacts it for that seat, so a bot can only ever see what its seat may see.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, Protocol

import grpc

from ..proto_gen.arena.v1 import game_pb2, game_pb2_grpc

TRANSIENT = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED", "ABORTED", "RESOURCE_EXHAUSTED",
                       "INTERNAL", "UNKNOWN", "CANCELLED"})


class EngineError(Exception):
    """A refused or failed call; `code` is a grpc.StatusCode name."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason

    @property
    def transient(self) -> bool:
        """Whether trying again (perhaps on another engine worker) may succeed."""
        return self.code in TRANSIENT


@dataclass(frozen=True)
class Submitted:
    """The engine's reply to an answer: `duplicate` if the decision had been answered before."""

    duplicate: bool
    version: int
    over: bool


class Engine(Protocol):
    """What the bot worker asks of the engine."""

    async def submit(self, game: str, token: str, decision: int, picks: list[str]
                     ) -> Submitted:
        """Answer `decision` for the token's seat."""
        ...

    def entries(self, game: str, token: str, after: int
                ) -> AsyncGenerator[tuple[int, str, str], None]:
        """(seq, type, payload JSON) of log entries after `after`, redacted for the token's
        seat, live ones included; the caller stops reading when it has what it needs."""
        ...


class GrpcEngine:
    """Engine over GameService on one or more engine workers (any of them serves any game).

    Calls go round-robin; a transient failure moves the next call to the next worker. Create it
    inside the running event loop (grpc.aio channels bind to the loop they are made in).
    """

    def __init__(self, targets: list[str], timeout_s: float = 5.0) -> None:
        if not targets:
            raise ValueError("no engine address")
        self.channels = [grpc.aio.insecure_channel(t) for t in targets]
        self.stubs = [game_pb2_grpc.GameServiceStub(ch) for ch in self.channels]  # type: ignore[no-untyped-call]
        self.timeout_s = timeout_s
        self._next = itertools.cycle(range(len(self.stubs)))

    def _stub(self) -> Any:
        return self.stubs[next(self._next)]

    async def submit(self, game: str, token: str, decision: int, picks: list[str]
                     ) -> Submitted:
        """See Engine.submit."""
        req = game_pb2.SubmitActionRequest(game_id=game, seat_token=token, decision_id=decision,
                                           picks=picks)
        try:
            r = await self._stub().SubmitAction(req, timeout=self.timeout_s)
        except grpc.aio.AioRpcError as err:
            raise EngineError(err.code().name, err.details() or "") from None
        return Submitted(bool(r.duplicate), int(r.version), bool(r.over))

    async def entries(self, game: str, token: str, after: int
                      ) -> AsyncGenerator[tuple[int, str, str], None]:
        """See Engine.entries (GameService.StreamView, cancelled when the caller stops)."""
        call = self._stub().StreamView(game_pb2.StreamViewRequest(
            game_id=game, seat_token=token, from_seq=after), timeout=self.timeout_s)
        try:
            async for env in call:
                yield int(env.seq), str(env.type), str(env.payload_json)
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                raise EngineError(err.code().name, err.details() or "") from None
        finally:
            call.cancel()

    async def close(self) -> None:
        """Close every channel."""
        await asyncio.gather(*(ch.close() for ch in self.channels))
