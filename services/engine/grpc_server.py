"""GameService over grpc.aio: each method decodes, calls one `Games` function, encodes.

Every refusal maps to its status (`Refused.code`); anything unexpected is INTERNAL, so a client
never sees UNKNOWN.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import msgspec

from ..contracts import tokens
from ..contracts.streams import NewMatch, Seat
from ..eventlog.entry import SEED_REVEAL, decode_entry
from ..proto_gen.arena.v1 import common_pb2, game_pb2, game_pb2_grpc
from ..rules import api
from . import views
from .service import Games, Refused

MAX_MESSAGE = 1 << 20
MAX_BATCH = 512


async def _refuse(context: grpc.aio.ServicerContext, exc: BaseException) -> None:
    if isinstance(exc, Refused):
        await context.abort(grpc.StatusCode[exc.code], exc.reason)
    await context.abort(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}")


def _viewer(games: Games, game_id: str, token: str) -> int:
    if not token:
        return api.SPECTATOR
    try:
        claims = games.tokens.verify(token)
    except tokens.BadToken as exc:
        raise Refused("UNAUTHENTICATED", str(exc)) from None
    if claims.g != game_id:
        raise Refused("PERMISSION_DENIED", "the seat token is for another game")
    return claims.s


class GameServicer(game_pb2_grpc.GameServiceServicer):
    """The transport shim over `Games`."""

    def __init__(self, games: Games) -> None:
        self.games = games

    async def CreateGame(
        self, request: game_pb2.CreateGameRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.CreateGameResponse:
        """See game.proto."""
        try:
            try:
                options = msgspec.json.decode(request.options_json or "{}", type=dict[str, Any])
            except msgspec.MsgspecError as exc:
                raise Refused("INVALID_ARGUMENT", f"options_json: {exc}") from None
            match = NewMatch(
                match_id=request.match_id,
                ruleset=request.ruleset,
                seats=[Seat(s.player, s.bot, s.name) for s in request.seats],
                options=options,
                time_limit_ms=request.time_limit_ms,
                hosted_after=request.hosted_after,
            )
            created, version = await self.games.create_game(match)
        except Exception as exc:  # noqa: BLE001 - mapped to a status, never UNKNOWN
            await _refuse(context, exc)
            raise
        return game_pb2.CreateGameResponse(
            game_id=request.match_id, created=created, version=version
        )

    async def _submit(
        self, request: game_pb2.SubmitActionRequest, *, with_next: bool
    ) -> game_pb2.SubmitActionResponse:
        """One answer through `Games.submit_action`, counted and timed; raises on refusal."""
        m, start = self.games.metrics, time.perf_counter()
        try:
            r = await self.games.submit_action(
                request.game_id, request.seat_token, request.decision_id, list(request.picks)
            )
        except Exception as exc:
            m.count("actions", getattr(exc, "code", "INTERNAL").lower())
            raise
        m.count("actions", "duplicate" if r.duplicate else "ok")
        m.latency.observe(time.perf_counter() - start)
        out = game_pb2.SubmitActionResponse(
            duplicate=r.duplicate,
            version=r.version,
            over=r.over,
            answer=common_pb2.Answer(
                decision_id=r.answer.decision,
                seat=r.answer.seat,
                picks=r.answer.picks,
                auto=r.answer.auto,
            ),
        )
        if with_next and r.next is not None and not r.over:
            out.next.CopyFrom(views.decision(request.game_id, r.next, r.version, r.answer.seat))
        return out

    async def SubmitAction(
        self, request: game_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.SubmitActionResponse:
        """See game.proto."""
        try:
            return await self._submit(request, with_next=True)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise

    async def SubmitActions(
        self, request: game_pb2.SubmitActionsRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.SubmitActionsResponse:
        """See game.proto: the answers run concurrently (one game's answers in order, by its
        lock), so their Redis writes share round trips; each one is refused on its own."""
        if len(request.actions) > MAX_BATCH:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"at most {MAX_BATCH} actions per call"
            )
        done = await asyncio.gather(
            *(self._submit(a, with_next=False) for a in request.actions), return_exceptions=True
        )
        out = game_pb2.SubmitActionsResponse()
        for r in done:
            if isinstance(r, game_pb2.SubmitActionResponse):
                out.results.add(code=0, response=r)
            elif isinstance(r, Refused):
                out.results.add(code=grpc.StatusCode[r.code].value[0], reason=r.reason)
            elif isinstance(r, Exception):
                out.results.add(
                    code=grpc.StatusCode.INTERNAL.value[0], reason=f"{type(r).__name__}: {r}"
                )
            else:  # a BaseException (cancellation): not ours to swallow
                raise r
        return out

    async def GetView(
        self, request: game_pb2.GetViewRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.GetViewResponse:
        """See game.proto."""
        try:
            viewer = _viewer(self.games, request.game_id, request.seat_token)
            hot = await self.games.get(request.game_id)
            records = await self.games.store.read(request.game_id, 0, hot.log.version)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        out = game_pb2.GetViewResponse(version=hot.log.version, viewer=viewer, over=hot.game.over)
        out.events.extend(views.envelope(seq, decode_entry(d), viewer) for seq, d in records)
        d = api.pending(hot.game)
        if d is not None and not hot.game.over and views.may_see(hot.game, d, viewer):
            out.pending.CopyFrom(views.decision(request.game_id, d, hot.log.version, viewer))
            out.pending.deadline_ms = await self.games.deadline_ms(hot, d)
        return out

    async def StreamView(
        self, request: game_pb2.StreamViewRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[common_pb2.EventEnvelope]:
        """See game.proto: entries after from_seq, then live ones until the seed reveal."""
        try:
            viewer = _viewer(self.games, request.game_id, request.seat_token)
            await self.games.get(request.game_id)  # NOT_FOUND for an unknown game
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        after = max(0, request.from_seq)
        while True:
            rows = await self.games.store.tail(request.game_id, after, 1000)
            for seq, data in rows:
                entry = decode_entry(data)
                yield views.envelope(seq, entry, viewer)
                after = seq
                if entry.kind == SEED_REVEAL:
                    return
            if not rows and await self.games.store.head(request.game_id) == 0:
                return  # archived and dropped from Redis

    async def GetDecision(
        self, request: game_pb2.GetDecisionRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.GetDecisionResponse:
        """See game.proto."""
        try:
            viewer = _viewer(self.games, request.game_id, request.seat_token)
            hot = await self.games.get(request.game_id)
            if await self.games.store.head(request.game_id) != hot.log.version:
                self.games.evict(request.game_id)  # another worker moved on: a poll sees it
                hot = await self.games.get(request.game_id)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        out = game_pb2.GetDecisionResponse(over=hot.game.over, version=hot.log.version)
        d = api.pending(hot.game)
        if d is not None and not hot.game.over and views.may_see(hot.game, d, viewer):
            out.decision.CopyFrom(views.decision(request.game_id, d, hot.log.version, viewer))
            out.decision.deadline_ms = await self.games.deadline_ms(hot, d)
        return out

    async def SetHosted(
        self, request: game_pb2.SetHostedRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.SetHostedResponse:
        """See game.proto."""
        try:
            version, hosted = await self.games.set_hosted(
                request.game_id, request.seat_token, request.hosted, request.resign
            )
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        return game_pb2.SetHostedResponse(version=version, hosted=hosted)


def make_server(
    games: Games, host: str = "127.0.0.1", port: int = 0
) -> tuple[grpc.aio.Server, int, Any]:
    """A grpc.aio server with GameService and health checking (create it inside the running
    event loop); returns (server, bound port, health servicer)."""
    from grpc_health.v1 import health, health_pb2_grpc

    server = grpc.aio.server(options=[("grpc.max_receive_message_length", MAX_MESSAGE)])
    game_pb2_grpc.add_GameServiceServicer_to_server(  # type: ignore[no-untyped-call]
        GameServicer(games), server
    )
    checker = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    return server, server.add_insecure_port(f"{host}:{port}"), checker


async def set_serving(checker: Any, serving: bool = True) -> None:
    """Report the worker (and GameService) as serving or not to health checks."""
    from grpc_health.v1 import health_pb2

    status = (
        health_pb2.HealthCheckResponse.SERVING
        if serving
        else health_pb2.HealthCheckResponse.NOT_SERVING
    )
    for name in ("", "arena.v1.GameService"):
        await checker.set(name, status)
