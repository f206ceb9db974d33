"""In-process GameService servers that count what reaches each: which games' calls, and which
bot sessions (for the tests of a DNS name standing for several engines, services/targets.py).
They answer every call as the engine would accept it; nothing else of an engine is here."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import grpc

from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc


def _ok() -> game_pb2.SubmitActionResult:
    return game_pb2.SubmitActionResult(response=game_pb2.SubmitActionResponse(version=1))


class FakeEngine(game_pb2_grpc.GameServiceServicer):  # type: ignore[misc]
    """One engine: `calls[game]` counts the calls and answers of each game that came here,
    `sessions` the bot sessions opened here (by their worker header)."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.sessions: list[str] = []
        self.open_sessions = 0
        self.port = 0
        self.server: Any = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def GetDecision(self, request: Any, context: Any) -> Any:
        self.calls[request.game_id] += 1
        return game_pb2.GetDecisionResponse(over=False)

    async def SubmitAction(self, request: Any, context: Any) -> Any:
        self.calls[request.game_id] += 1
        return game_pb2.SubmitActionResponse(version=1)

    async def SetHosted(self, request: Any, context: Any) -> Any:
        self.calls[request.game_id] += 1
        return game_pb2.SetHostedResponse(version=1, hosted=request.hosted)

    async def SubmitActions(self, request: Any, context: Any) -> Any:
        for a in request.actions:
            self.calls[a.game_id] += 1
        return game_pb2.SubmitActionsResponse(results=[_ok() for _ in request.actions])

    async def BotSession(self, requests: Any, context: Any) -> AsyncIterator[Any]:
        worker = dict(context.invocation_metadata()).get("arena-bot-worker", "")
        self.sessions.append(worker)
        self.open_sessions += 1
        try:
            async for req in requests:
                for a in req.answers:
                    self.calls[a.action.game_id] += 1
                # every message answered, even a heartbeat (the worker then hears us)
                yield game_pb2.BotSessionResponse(
                    results=[game_pb2.BotAnswerResult(tag=a.tag, result=_ok()) for a in req.answers]
                )
        finally:
            self.open_sessions -= 1


@contextlib.asynccontextmanager
async def fake_engines(n: int) -> AsyncIterator[list[FakeEngine]]:
    """`n` fake engines listening on 127.0.0.1 (distinct ports), stopped at the end."""
    engines = [FakeEngine() for _ in range(n)]
    for e in engines:
        e.server = grpc.aio.server()
        game_pb2_grpc.add_GameServiceServicer_to_server(e, e.server)  # type: ignore[no-untyped-call]
        e.port = e.server.add_insecure_port("127.0.0.1:0")
        await e.server.start()
    try:
        yield engines
    finally:
        for e in engines:
            await e.server.stop(grace=None)


def fixed(answers: dict[str, list[str]]) -> Any:
    """A resolver (services/targets.py) that answers from `answers` (host -> targets, which the
    test may change); a host not there does not resolve."""

    async def resolve(host: str, port: int) -> list[str]:
        if host not in answers:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return list(answers[host])

    return resolve
