"""Matchmaker over real gRPC (in-process server, real Redis, manual clock): statuses, streams."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import grpc
import pytest
import redis.asyncio as aioredis

from services.contracts import tokens
from services.matchmaking.clock import ManualClock
from services.matchmaking.core import Matchmaker
from services.matchmaking.grpc_server import (
    MatchmakerServicer,
    Notifier,
    make_server,
    set_serving,
)
from services.matchmaking.modes import Policy, build_modes
from services.matchmaking.rating_store import RatingStore
from services.proto_gen.arena.v1 import matchmaker_pb2 as pb
from services.proto_gen.arena.v1 import matchmaker_pb2_grpc
from services.rpc_guard import signed_channel

SECRET = b"mm-grpc-" + b"x" * 32
Env = tuple[Matchmaker, ManualClock, matchmaker_pb2_grpc.MatchmakerStub, aioredis.Redis]


@pytest.fixture
async def env(redis_client: aioredis.Redis, redis_namespace: str) -> AsyncIterator[Env]:
    clock = ManualClock(0)
    ratings = RatingStore(redis_client, redis_namespace)
    mm = Matchmaker(
        redis_client,
        build_modes({"standard-9": Policy(bot_after_ms=0)}, Policy(bot_after_ms=5_000)),
        SECRET,
        clock,
        ratings=ratings,
        namespace=redis_namespace,
        ticket_ttl_ms=10_000,
        rng=random.Random(2),
    )
    notifier = Notifier(redis_client, mm.channel)
    stop = asyncio.Event()
    listener = asyncio.create_task(notifier.run(stop))
    server, port, checker = make_server(MatchmakerServicer(mm, notifier, ratings, 0.2))
    await server.start()
    await set_serving(checker)
    async with signed_channel(f"127.0.0.1:{port}", SECRET) as ch:
        yield mm, clock, matchmaker_pb2_grpc.MatchmakerStub(ch), redis_client
    stop.set()
    await listener
    await server.stop(None)


async def rest(stream: object) -> list[pb.TicketUpdate]:
    """Read a stream to its end (read() and async-for cannot be mixed on one call)."""
    out = []
    while (u := await stream.read()) != grpc.aio.EOF:  # type: ignore[attr-defined]
        out.append(u)
    return out


async def _code(call: object) -> grpc.StatusCode:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as err:
        return err.code()
    return grpc.StatusCode.OK


async def test_bad_input_statuses_change_nothing(env: Env, redis_namespace: str) -> None:
    mm, _, stub, client = env
    t = await stub.Enqueue(pb.EnqueueRequest(player="ann", mode="standard-5"))
    assert t.mode == "standard-5" and t.players == 5 and t.expires_ms == 10_000
    keys = sorted(await client.keys(f"{redis_namespace}*"))
    C = grpc.StatusCode
    assert (
        await _code(stub.Enqueue(pb.EnqueueRequest(player="bob", mode="mahjong-4")))
        == C.INVALID_ARGUMENT
    )
    assert (
        await _code(stub.Enqueue(pb.EnqueueRequest(player="bob", mode="standard", players=3)))
        == C.INVALID_ARGUMENT
    )
    assert (
        await _code(stub.Enqueue(pb.EnqueueRequest(player="", mode="standard-5")))
        == C.INVALID_ARGUMENT
    )
    assert (
        await _code(stub.Enqueue(pb.EnqueueRequest(player="ann", mode="standard-5")))
        == C.ALREADY_EXISTS
    )
    assert (
        await _code(stub.Cancel(pb.CancelRequest(ticket_id=t.ticket_id, player="eve")))
        == C.PERMISSION_DENIED
    )
    assert await _code(stub.Cancel(pb.CancelRequest(ticket_id="nope", player="ann"))) == C.NOT_FOUND
    watch = stub.WatchTicket(pb.WatchTicketRequest(ticket_id=t.ticket_id, player="eve"))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in watch:
            pass
    assert err.value.code() == C.PERMISSION_DENIED
    assert await _code(stub.QueueStatus(pb.QueueStatusRequest(mode="x"))) == C.INVALID_ARGUMENT
    assert await _code(stub.Leaderboard(pb.LeaderboardRequest(mode="x"))) == C.INVALID_ARGUMENT
    assert (
        await _code(stub.Leaderboard(pb.LeaderboardRequest(mode="standard-5", limit=-1)))
        == C.INVALID_ARGUMENT
    )
    assert sorted(await client.keys(f"{redis_namespace}*")) == keys
    assert (await stub.QueueStatus(pb.QueueStatusRequest(mode="standard", players=5))).waiting == 1
    modes = (await stub.ListModes(pb.ListModesRequest())).modes
    assert {"standard-5", "standard-10", "honglou-10"} <= {m.id for m in modes}
    assert (await stub.Cancel(pb.CancelRequest(ticket_id=t.ticket_id, player="ann"))).cancelled


async def test_watch_matched_with_seat_token(env: Env) -> None:
    mm, clock, stub, _ = env
    tickets = [
        await stub.Enqueue(pb.EnqueueRequest(player=f"w{i}", mode="standard-4")) for i in range(3)
    ]
    streams = [
        stub.WatchTicket(pb.WatchTicketRequest(ticket_id=t.ticket_id, player=t.player))
        for t in tickets
    ]
    firsts = [await s.read() for s in streams]
    assert all(u.state == pb.TicketUpdate.WAITING for u in firsts)
    clock.advance(5_000)  # the bot wait is over: one bot takes the fourth seat
    (formed,) = await mm.tick()
    for t, s in zip(tickets, streams, strict=True):
        last = (await rest(s))[-1]
        assert last.state == pb.TicketUpdate.MATCHED and last.game_id == formed.game
        assert last.seat.player == t.player and last.waited_ms == 5_000
        claims = tokens.verify(SECRET, last.seat_token, now_ms=clock.now_ms())
        assert (claims.g, claims.s) == (formed.game, last.seat.seat)


async def test_watch_keeps_alive_then_cancel_ends_stream(env: Env) -> None:
    mm, clock, stub, _ = env
    t = await stub.Enqueue(pb.EnqueueRequest(player="kim", mode="standard-9"))
    other = await stub.Enqueue(pb.EnqueueRequest(player="lee", mode="standard-9"))
    stream = stub.WatchTicket(pb.WatchTicketRequest(ticket_id=t.ticket_id, player="kim"))
    await stream.read()
    clock.advance(8_000)
    await stream.read()  # a heartbeat refreshed the TTL at 8 s
    clock.advance(4_000)
    await mm.tick()
    other_info = await mm.ticket(other.ticket_id)
    mine = await mm.ticket(t.ticket_id)
    assert other_info is not None and other_info.state == "expired"
    assert mine is not None and mine.state == "queued"
    await stub.Cancel(pb.CancelRequest(ticket_id=t.ticket_id, player="kim"))
    assert (await rest(stream))[-1].state == pb.TicketUpdate.CANCELLED
    gone = stub.WatchTicket(pb.WatchTicketRequest(ticket_id=other.ticket_id, player="lee"))
    assert [u.state async for u in gone] == [pb.TicketUpdate.EXPIRED]
