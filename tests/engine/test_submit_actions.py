"""GameService.SubmitActions over a real grpc.aio server (in-memory and Redis stores): each
answer of a batch is accepted or refused on its own, as SubmitAction would; and the bots'
GrpcEngine sends concurrent submits as one SubmitActions call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
import redis.asyncio as aioredis

from services.bots.engine_client import EngineError, GrpcEngine, Submitted
from services.contracts import tokens
from services.contracts.streams import (
    DECISIONS,
    BotDecision,
    decode,
    game_stream_key,
    stream_keys,
)
from services.engine.grpc_server import MAX_BATCH, make_server, set_serving
from services.engine.service import Games, NewMatch
from services.engine.side import MemorySide, RedisSide
from services.eventlog import InMemoryEventStore, RedisEventStore, Seat
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from services.readside.positions import positions_of
from services.redisinfra.redis_client import connect
from services.rules import api

SECRET = b"submit-actions-test"
GAMES = ["g0", "g1", "g2", "g3"]
OK, UNAUTHENTICATED, FAILED_PRECONDITION, INVALID_ARGUMENT = 0, 16, 9, 3


@dataclass
class Env:
    games: Games
    stub: game_pb2_grpc.GameServiceStub
    port: int
    redis: aioredis.Redis | None = None  # the Redis backing, if any
    namespace: str = ""


@pytest.fixture(params=["memory", "redis"])
async def env(request: pytest.FixtureRequest) -> AsyncIterator[Env]:
    """A server over `Games` with four 5-seat games; game gK already has K answers logged (so
    the games sit at different versions and decisions). On Redis every seat is a bot, so each
    answer's outbox publishes the next decision."""
    client: aioredis.Redis | None = None
    ns = ""
    if request.param == "memory":
        games = Games(InMemoryEventStore(), MemorySide(), SECRET)
    else:
        url, ns = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_namespace")
        client = connect(url)
        games = Games(RedisEventStore(client, ns), RedisSide(client, ns), SECRET)
    bots = request.param == "redis"
    server, port, checker = make_server(games)
    await server.start()
    await set_serving(checker)
    try:
        for k, g in enumerate(GAMES):
            await games.create_game(
                NewMatch(
                    match_id=g,
                    ruleset="standard",
                    seed=100 + k,
                    seats=[Seat(f"bot:random{i}" if bots else f"p{i}", bot=bots) for i in range(5)],
                )
            )
            for _ in range(k):
                d = await _pending(games, g)
                await games.submit_action(
                    g,
                    tokens.issue(SECRET, g, d.seat),
                    (await games.get(g)).ids.opaque(d.id),
                    list(api.default_answer(d).picks),
                )
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            yield Env(games, game_pb2_grpc.GameServiceStub(ch), port, client, ns)
    finally:
        await server.stop(None)
        if client is not None:
            keys = [k async for k in client.scan_iter(match=f"{ns}*", count=1000)]
            if keys:
                await client.delete(*keys)
            await client.aclose()


async def _pending(games: Games, g: str) -> api.Decision:
    d = api.pending((await games.get(g)).game)
    assert d is not None
    return d


async def _answer(
    games: Games,
    g: str,
    *,
    secret: bytes = SECRET,
    decision_delta: int = 0,
    picks: list[str] | None = None,
) -> game_pb2.SubmitActionRequest:
    """The default answer to `g`'s pending decision (optionally spoiled)."""
    d = await _pending(games, g)
    return game_pb2.SubmitActionRequest(
        game_id=g,
        seat_token=tokens.issue(secret, g, d.seat),
        decision_id=(await games.get(g)).ids.opaque(d.id) + decision_delta,
        picks=list(api.default_answer(d).picks) if picks is None else picks,
    )


async def _heads(games: Games) -> dict[str, int]:
    return {g: await games.store.head(g) for g in GAMES}


async def _seen(games: Games, g: str, token: str) -> int:
    """How many entries of `g`'s log the token's seat receives: its position at the head, the
    version clients are shown (counted here from the log itself)."""
    seat = tokens.verify(SECRET, token).s
    return positions_of(await games.store.read(g)).position(seat, await games.store.head(g))


async def _id(games: Games, g: str) -> int:
    """The opaque id of `g`'s pending decision."""
    return (await games.get(g)).ids.opaque((await _pending(games, g)).id)


async def test_a_batch_for_several_games_is_accepted_in_order(env: Env) -> None:
    games = env.games
    order = ["g2", "g0", "g3", "g1"]
    reqs = [await _answer(games, g) for g in order]
    before = await _heads(games)
    assert len(set(before.values())) == len(GAMES)  # different versions: order is checkable
    reply = await env.stub.SubmitActions(game_pb2.SubmitActionsRequest(actions=reqs))
    assert len(reply.results) == len(reqs)
    after = await _heads(games)
    for g, req, res in zip(order, reqs, reply.results, strict=True):
        assert (res.code, res.reason) == (OK, ""), (g, res.reason)
        r = res.response
        assert not r.duplicate and not r.over
        assert after[g] > before[g]
        assert r.version == await _seen(games, g, req.seat_token)
        assert (r.answer.decision_id, list(r.answer.picks)) == (req.decision_id, list(req.picks))
        assert not r.HasField("next")  # a batch's answers never carry the next decision
    # each game moved on to its next decision
    for g, req in zip(order, reqs, strict=True):
        assert await _id(games, g) != req.decision_id


async def test_each_refusal_gets_its_own_code_and_the_good_answer_is_logged(env: Env) -> None:
    games = env.games
    reqs = [
        await _answer(games, "g0"),
        await _answer(games, "g1", secret=b"forged"),
        await _answer(games, "g2", decision_delta=3),
        await _answer(games, "g3", picks=["card:99999"]),
    ]
    before = await _heads(games)
    reply = await env.stub.SubmitActions(game_pb2.SubmitActionsRequest(actions=reqs))
    codes = [r.code for r in reply.results]
    assert codes == [OK, UNAUTHENTICATED, FAILED_PRECONDITION, INVALID_ARGUMENT]
    assert all(r.reason for r in reply.results[1:])
    assert not any(r.HasField("response") for r in reply.results[1:])
    after = await _heads(games)
    assert after["g0"] > before["g0"]
    assert reply.results[0].response.version == await _seen(games, "g0", reqs[0].seat_token)
    assert {g: after[g] for g in ("g1", "g2", "g3")} == {g: before[g] for g in ("g1", "g2", "g3")}
    # the refused games still wait for the same decisions
    for g, req in zip(("g2", "g3"), reqs[2:], strict=True):
        delta = 3 if g == "g2" else 0
        assert await _id(games, g) == req.decision_id - delta


async def test_a_repeated_answer_is_a_duplicate(env: Env) -> None:
    games = env.games
    req = await _answer(games, "g1")
    reply = await env.stub.SubmitActions(game_pb2.SubmitActionsRequest(actions=[req, req]))
    first, again = (r.response for r in reply.results)
    assert [r.code for r in reply.results] == [OK, OK]
    assert not first.duplicate and again.duplicate
    assert first.version == again.version == await _seen(games, "g1", req.seat_token)
    reply = await env.stub.SubmitActions(game_pb2.SubmitActionsRequest(actions=[req]))
    (later,) = reply.results
    assert later.code == OK and later.response.duplicate
    assert later.response.version == first.version


async def test_too_many_actions_fail_the_whole_call(env: Env) -> None:
    games = env.games
    req = await _answer(games, "g0")
    before = await _heads(games)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await env.stub.SubmitActions(game_pb2.SubmitActionsRequest(actions=[req] * (MAX_BATCH + 1)))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert await _heads(games) == before
    # at the limit the call goes through: one answer, the rest duplicates of it
    reply = await env.stub.SubmitActions(game_pb2.SubmitActionsRequest(actions=[req] * MAX_BATCH))
    assert [r.code for r in reply.results] == [OK] * MAX_BATCH
    assert [r.response.duplicate for r in reply.results] == [False] + [True] * (MAX_BATCH - 1)
    head = await games.store.head("g0")
    assert head > before["g0"]
    assert {r.response.version for r in reply.results} == {await _seen(games, "g0", req.seat_token)}


async def test_an_empty_batch_is_an_empty_reply(env: Env) -> None:
    reply = await env.stub.SubmitActions(game_pb2.SubmitActionsRequest())
    assert list(reply.results) == []


@pytest.mark.parametrize("env", ["redis"], indirect=True)
async def test_redis_outbox_effects_follow_the_batch(env: Env) -> None:
    """On Redis each accepted answer's append also moved the deadlines and published the next
    bot decision (its outbox); a refused one did neither."""
    games, client, ns = env.games, env.redis, env.namespace
    assert client is not None
    decisions = stream_keys(ns, DECISIONS.name)  # each game's in its partition's stream

    async def published() -> int:
        return sum([await client.xlen(k) for k in decisions])

    async def deadline_members() -> set[str]:
        keys = {game_stream_key(ns, "deadlines", g) for g in GAMES}
        return {m.decode() for k in keys for m in await client.zrange(k, 0, -1)}

    old = {g: (await _pending(games, g)).id for g in GAMES}
    before = await published()
    reqs = [
        await _answer(games, "g0"),
        await _answer(games, "g1"),
        await _answer(games, "g2", picks=["card:99999"]),
    ]
    reply = await env.stub.SubmitActions(game_pb2.SubmitActionsRequest(actions=reqs))
    assert [r.code for r in reply.results] == [OK, OK, INVALID_ARGUMENT]
    members = await deadline_members()
    for g in ("g0", "g1"):
        new = await _pending(games, g)
        assert f"{g}|{old[g]}" not in members and f"{g}|{new.id}" in members
    assert f"g2|{old['g2']}" in members
    assert await published() == before + 2
    fresh = {}
    for g in ("g0", "g1"):
        rows = await client.xrange(game_stream_key(ns, DECISIONS.name, g))
        fresh[g] = decode(rows[-1][1], BotDecision)
    for g, res in zip(("g0", "g1"), reply.results[:2], strict=True):
        next_seat = tokens.issue(SECRET, g, fresh[g].seat)  # the bot's seat, not the answering one
        assert fresh[g].version == await _seen(games, g, next_seat)
        assert res.response.version == await _seen(games, g, reqs[GAMES.index(g)].seat_token)
        assert fresh[g].decision == await _id(games, g)


async def test_grpc_engine_batches_concurrent_submits(env: Env) -> None:
    games = env.games
    reqs = [await _answer(games, g) for g in GAMES]
    reqs[2] = await _answer(games, "g2", decision_delta=3)  # refused: not pending
    before = await _heads(games)
    engine = GrpcEngine([f"127.0.0.1:{env.port}"])
    try:
        out = await asyncio.gather(
            *(engine.submit(r.game_id, r.seat_token, r.decision_id, list(r.picks)) for r in reqs),
            return_exceptions=True,
        )
        assert engine.batchers[0].batches == 1 and engine.batchers[0].items == len(GAMES)
    finally:
        await engine.close()
    after = await _heads(games)
    for g, res in zip(GAMES, out, strict=True):
        if g == "g2":
            assert isinstance(res, EngineError) and res.code == "FAILED_PRECONDITION", res
            assert after[g] == before[g]
        else:
            r = reqs[GAMES.index(g)]
            assert res == Submitted(False, await _seen(games, g, r.seat_token), False), (g, res)
            assert after[g] > before[g]
