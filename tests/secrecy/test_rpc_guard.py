"""Malformed bytes on every RPC of every gRPC service, and the matchmaker's signed calls (issue 40,
items 2 and 5; services/rpc_guard.py).

Every method of GameService, Matchmaker and ReplayService gets raw bytes that are no valid
request (junk, a truncated varint, a length past the end, a string that is not UTF-8, groups
nested past the parser's depth): each answer is INVALID_ARGUMENT (never UNKNOWN or INTERNAL),
and the servers log no traceback. The matchmaker answers nothing to a caller without the
deployment's signature: unsigned, signed with another secret, signed for another method or
another request's bytes, or signed long ago.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from services.bots.demo import play_live
from services.contracts import tokens
from services.engine.grpc_server import make_server
from services.engine.service import Games, NewMatch
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.matchmaking.clock import ManualClock
from services.matchmaking.core import Matchmaker
from services.matchmaking.grpc_server import MatchmakerServicer, Notifier
from services.matchmaking.grpc_server import make_server as mm_server
from services.matchmaking.modes import Policy, build_modes
from services.matchmaking.rating_store import RatingStore
from services.proto_gen.arena.v1 import game_pb2, matchmaker_pb2, replay_pb2
from services.replay import Replay
from services.replay.grpc_service import start_grpc
from services.rpc_guard import signed_channel

SECRET = b"rpc-guard-secret-" + b"x" * 32
MALFORMED = {
    "junk": b"\xff\xff\xff\xff",
    "truncated varint": b"\x08\x80",
    "length past the end": b"\x0a\xff\xff\xff\xff\x0f",
    "string not UTF-8": b"\x0a\x02\xff\xfe",
    "nested groups": b"\x0b" * 5_000,
}


def _methods(module: Any, service: str) -> list[tuple[str, bool, bool]]:
    """(full method path, client streams, server streams) of every RPC of `service`."""
    desc = module.DESCRIPTOR.services_by_name[service]
    return [
        (f"/{desc.full_name}/{m.name}", m.client_streaming, m.server_streaming)
        for m in desc.methods
    ]


def _malformed(module: Any, path: str) -> dict[str, bytes]:
    """The bodies that are no valid request of `path` (bytes that are not UTF-8 are only bad
    where field 1 is a string: elsewhere they are an unknown field, which parses)."""
    service, name = path.strip("/").rsplit("/", 1)
    method = module.DESCRIPTOR.services_by_name[service.rsplit(".", 1)[1]].methods_by_name[name]
    first = method.input_type.fields_by_number.get(1)
    out = dict(MALFORMED)
    if first is None or first.type != first.TYPE_STRING:
        del out["string not UTF-8"]
    return out


async def _raw_call(
    ch: grpc.aio.Channel,
    method: tuple[str, bool, bool],
    body: bytes,
    metadata: tuple[tuple[str, str], ...] = (),
) -> grpc.StatusCode:
    """The status of one call carrying `body` as its request (or its stream's one message)."""
    path, client_streams, server_streams = method
    kind = {
        (False, False): ch.unary_unary,
        (False, True): ch.unary_stream,
        (True, False): ch.stream_unary,
        (True, True): ch.stream_stream,
    }[(client_streams, server_streams)]
    call = kind(path)  # no (de)serializer: bytes go as they are

    async def one() -> AsyncIterator[bytes]:
        yield body

    try:
        reply = call(one() if client_streams else body, metadata=metadata, timeout=10)
        if server_streams:
            async for _ in reply:
                pass
        else:
            await reply
    except grpc.aio.AioRpcError as err:
        return err.code()
    return grpc.StatusCode.OK


def _no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad][:3]


@pytest.fixture
async def engine_port() -> AsyncIterator[tuple[Games, int]]:
    games = Games(InMemoryEventStore(), MemorySide(), SECRET)
    await games.create_game(
        NewMatch(match_id="g1", ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)])
    )
    server, port, _ = make_server(games)
    await server.start()
    yield games, port
    await server.stop(None)


@pytest.fixture
async def replay_port() -> AsyncIterator[int]:
    store = InMemoryEventStore()
    await play_live(store, "done", players=5, seed=4)
    r = Replay(store)
    server, port = await start_grpc(r, "127.0.0.1:0")
    yield port
    await server.stop(None)
    await r.close()


@pytest.fixture
async def mm_port(redis_client: Any, redis_namespace: str) -> AsyncIterator[tuple[Matchmaker, int]]:
    ratings = RatingStore(redis_client, redis_namespace)
    mm = Matchmaker(
        redis_client,
        build_modes({}, Policy(bot_after_ms=5_000)),
        SECRET,
        ManualClock(0),
        ratings=ratings,
        namespace=redis_namespace,
        rng=random.Random(1),
    )
    server, port, _ = mm_server(MatchmakerServicer(mm, Notifier(redis_client, mm.channel), ratings))
    await server.start()
    yield mm, port
    await server.stop(None)


async def test_malformed_bytes_on_every_engine_and_replay_rpc(
    engine_port: tuple[Games, int], replay_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """(Before the guard: UNKNOWN and a 7-line traceback per call, on every RPC.)"""
    from services.proto_gen.arena.v1 import game_pb2 as g
    from services.proto_gen.arena.v1 import replay_pb2 as r

    games, gport = engine_port
    bot = ((tokens.BOT_KEY_HEADER, games.bot_key),)  # BotSession reads messages only then
    calls = 0
    with caplog.at_level(logging.INFO):
        for port, module, service in ((gport, g, "GameService"), (replay_port, r, "ReplayService")):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                for method in _methods(module, service):
                    for what, body in _malformed(module, method[0]).items():
                        code = await _raw_call(ch, method, body, bot if method[1] else ())
                        assert code == grpc.StatusCode.INVALID_ARGUMENT, (method[0], what, code)
                        calls += 1
    assert calls >= 4 * (len(_methods(g, "GameService")) + len(_methods(r, "ReplayService")))
    _no_tracebacks(caplog)
    lines = [x for x in caplog.records if x.name == "arena.rpc"]
    assert 1 <= len(lines) <= calls  # one line at most a second, never one per call's frame


async def test_matchmaker_refuses_unsigned_and_malformed_calls(
    mm_port: tuple[Matchmaker, int], caplog: pytest.LogCaptureFixture
) -> None:
    """Before: any stranger could enqueue under another's player id and read the seat tokens."""
    mm, port = mm_port
    methods = _methods(matchmaker_pb2, "Matchmaker")
    key = tokens.call_key(SECRET)
    with caplog.at_level(logging.INFO):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            for method in methods:
                valid = b""  # every request's empty message parses
                unsigned = await _raw_call(ch, method, valid)
                assert unsigned == grpc.StatusCode.UNAUTHENTICATED, method[0]
                for what, body in _malformed(matchmaker_pb2, method[0]).items():  # signed
                    meta = ((tokens.CALL_HEADER, tokens.sign_call(key, method[0], body)),)
                    code = await _raw_call(ch, method, body, meta)
                    assert code == grpc.StatusCode.INVALID_ARGUMENT, (method[0], what, code)
    _no_tracebacks(caplog)
    assert await mm.tables.listing(10) == []


async def test_matchmaker_signatures_bind_secret_method_body_and_time(
    mm_port: tuple[Matchmaker, int],
) -> None:
    mm, port = mm_port
    path = "/arena.v1.Matchmaker/Enqueue"
    ok = matchmaker_pb2.EnqueueRequest(player="ann", mode="standard-5").SerializeToString()
    other = matchmaker_pb2.EnqueueRequest(player="bob", mode="standard-5").SerializeToString()
    method = (path, False, False)
    key = tokens.call_key(SECRET)
    forged = {
        "another secret": tokens.sign_call(tokens.call_key(b"y" * 40), path, ok),
        "another method": tokens.sign_call(key, "/arena.v1.Matchmaker/CreateTable", ok),
        "another body": tokens.sign_call(key, path, other),
        "an hour ago": tokens.sign_call(key, path, ok, now_ms=1_000),
        "junk": "1.2.3",
        "empty": "",
    }
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        for what, value in forged.items():
            code = await _raw_call(ch, method, ok, ((tokens.CALL_HEADER, value),))
            assert code == grpc.StatusCode.UNAUTHENTICATED, what
        assert await mm.players_of("standard-5") >= 0
        good = ((tokens.CALL_HEADER, tokens.sign_call(key, path, ok)),)
        assert await _raw_call(ch, method, ok, good) == grpc.StatusCode.OK


async def test_signed_channel_calls_the_matchmaker(mm_port: tuple[Matchmaker, int]) -> None:
    """The client side every caller uses: unary and streaming calls pass."""
    from services.proto_gen.arena.v1 import matchmaker_pb2_grpc

    _, port = mm_port
    async with signed_channel(f"127.0.0.1:{port}", SECRET) as ch:
        stub = matchmaker_pb2_grpc.MatchmakerStub(ch)
        modes = await stub.ListModes(matchmaker_pb2.ListModesRequest())
        assert modes.modes
        t = await stub.Enqueue(matchmaker_pb2.EnqueueRequest(player="ann", mode="standard-5"))
        call = stub.WatchTicket(
            matchmaker_pb2.WatchTicketRequest(ticket_id=t.ticket_id, player="ann")
        )
        first = await asyncio.wait_for(call.read(), 10)
        assert first.state == matchmaker_pb2.TicketUpdate.WAITING
        call.cancel()
    async with signed_channel(f"127.0.0.1:{port}", b"z" * 40) as ch:
        stub = matchmaker_pb2_grpc.MatchmakerStub(ch)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.ListModes(matchmaker_pb2.ListModesRequest())
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_every_service_is_covered() -> None:
    """A new service or RPC is in these loops by construction (read from the descriptors)."""
    assert len(_methods(game_pb2, "GameService")) >= 9
    assert len(_methods(replay_pb2, "ReplayService")) >= 5
    assert len(_methods(matchmaker_pb2, "Matchmaker")) >= 8


async def test_deeply_nested_options_are_invalid_argument(mm_port: tuple[Matchmaker, int]) -> None:
    """Issue 40: Matchmaker.CreateTable with options_json nested 100,000 deep was INTERNAL
    (RecursionError)."""
    from services.proto_gen.arena.v1 import matchmaker_pb2_grpc

    _, port = mm_port
    async with signed_channel(f"127.0.0.1:{port}", SECRET) as ch:
        stub = matchmaker_pb2_grpc.MatchmakerStub(ch)
        for deep in ('{"a":' * 30_000 + "1" + "}" * 30_000, "[" * 30_000 + "]" * 30_000):
            settings = matchmaker_pb2.TableSettings(
                ruleset="standard", players=5, options_json=deep
            )
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.CreateTable(
                    matchmaker_pb2.CreateTableRequest(player="p", settings=settings)
                )
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
