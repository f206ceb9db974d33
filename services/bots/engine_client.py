"""The bot worker's port to the engine: submit an answer, read the seat's redacted log.

`Engine` is what the worker's logic needs; `GrpcEngine` is the adapter over GameService (tests
also drive the logic through an in-process adapter). Failures are `EngineError(code, reason)`
with `code` a grpc.StatusCode name, so the logic never imports grpc.

Every entry a bot folds comes from GameService.StreamView with the seat's token: the engine
redacts it for that seat, so a bot can only ever see what its seat may see.
"""

from __future__ import annotations

import asyncio
import functools
import time
import zlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Protocol

import grpc

from ..eventlog.batching import TickBatcher
from ..proto_gen.arena.v1 import game_pb2, game_pb2_grpc

MAX_BATCH = 512  # = the engine's limit per SubmitActions call
_CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}
TRANSIENT = frozenset(
    {
        "UNAVAILABLE",
        "DEADLINE_EXCEEDED",
        "ABORTED",
        "RESOURCE_EXHAUSTED",
        "INTERNAL",
        "UNKNOWN",
        "CANCELLED",
    }
)


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

    async def submit(self, game: str, token: str, decision: int, picks: list[str]) -> Submitted:
        """Answer `decision` for the token's seat."""
        ...

    def entries(
        self, game: str, token: str, after: int, upto: int = 0
    ) -> AsyncGenerator[tuple[int, str, str], None]:
        """(seq, type, payload JSON) of the log entries after `after` that the token's seat may
        see, redacted for it (other seats' answers are withheld); with `upto` the stream ends
        once entries up to `upto` were sent, else it runs live until the caller stops."""
        ...


class GrpcEngine:
    """Engine over GameService on one or more engine workers (any of them serves any game).

    A game's calls all go to one worker (chosen by a hash of the game id) while it answers:
    that worker keeps the game hot, where alternating workers would each find their cached copy
    behind the log and reload it on every answer. The answers submitted in one event-loop
    iteration for one worker travel as one SubmitActions call. A worker that fails with
    UNAVAILABLE is skipped for `cooldown_s`. Create this inside the running event loop
    (grpc.aio channels bind to the loop they are made in).
    """

    def __init__(self, targets: list[str], timeout_s: float = 5.0, cooldown_s: float = 2.0) -> None:
        if not targets:
            raise ValueError("no engine address")
        self.channels = [grpc.aio.insecure_channel(t) for t in targets]
        self.stubs = [game_pb2_grpc.GameServiceStub(ch) for ch in self.channels]  # type: ignore[no-untyped-call]
        self.timeout_s, self.cooldown_s = timeout_s, cooldown_s
        self.down_until = [0.0] * len(self.stubs)
        # answers submitted in one loop iteration go to their worker as one SubmitActions call
        self.batchers = [
            TickBatcher(functools.partial(self._submit_batch, i), 32, 8)
            for i in range(len(self.stubs))
        ]

    def _pick(self, game: str) -> int:
        n, now = len(self.stubs), time.monotonic()
        first = zlib.crc32(game.encode()) % n
        return next(
            (i for i in ((first + k) % n for k in range(n)) if self.down_until[i] <= now), first
        )

    def _failed(self, index: int, err: grpc.aio.AioRpcError) -> EngineError:
        if err.code() == grpc.StatusCode.UNAVAILABLE:
            self.down_until[index] = time.monotonic() + self.cooldown_s
        return EngineError(err.code().name, err.details() or "")

    async def submit(self, game: str, token: str, decision: int, picks: list[str]) -> Submitted:
        """See Engine.submit (batched with the other answers of this loop iteration)."""
        req = game_pb2.SubmitActionRequest(
            game_id=game, seat_token=token, decision_id=decision, picks=picks
        )
        return await self.batchers[self._pick(game)].submit(req)

    async def _submit_batch(
        self, index: int, reqs: list[game_pb2.SubmitActionRequest]
    ) -> list[Submitted | EngineError]:
        try:
            reply = await self.stubs[index].SubmitActions(
                game_pb2.SubmitActionsRequest(actions=reqs), timeout=self.timeout_s
            )
        except grpc.aio.AioRpcError as err:
            raise self._failed(index, err) from None
        out: list[Submitted | EngineError] = []
        for r in reply.results:
            if r.code:
                out.append(EngineError(_CODE_NAMES.get(r.code, "UNKNOWN"), r.reason))
            else:
                out.append(
                    Submitted(
                        bool(r.response.duplicate), int(r.response.version), bool(r.response.over)
                    )
                )
        return out

    async def entries(
        self, game: str, token: str, after: int, upto: int = 0
    ) -> AsyncGenerator[tuple[int, str, str], None]:
        """See Engine.entries (GameService.StreamView, cancelled when the caller stops)."""
        i = self._pick(game)
        call = self.stubs[i].StreamView(
            game_pb2.StreamViewRequest(
                game_id=game, seat_token=token, from_seq=after, upto_seq=upto
            ),
            timeout=self.timeout_s,
        )
        try:
            async for env in call:
                yield int(env.seq), str(env.type), str(env.payload_json)
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                raise self._failed(i, err) from None
        finally:
            call.cancel()

    async def close(self) -> None:
        """Close every channel."""
        await asyncio.gather(*(ch.close() for ch in self.channels))
