"""GameService.BotSession over a real grpc.aio server on Redis: only a caller holding the
bot-session key may open one; while one is open, bot decisions are pushed on it instead of being
published to arena:decisions, answers sent on it are taken as SubmitAction takes them; a session
that ends hands the decisions it held to arena:decisions. And the bots' GrpcEngine keeps
sessions open, takes what they push and answers on them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import msgspec
import pytest
import redis.asyncio as aioredis

from services.bots.engine_client import GrpcEngine, Submitted
from services.contracts import tokens
from services.contracts.streams import DECISIONS, BotDecision, decode, stream_keys
from services.engine.grpc_server import make_server, set_serving
from services.engine.service import Games, NewMatch
from services.engine.side import RedisSide
from services.eventlog import RedisEventStore, Seat
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from services.redisinfra.redis_client import connect
from services.rules import api

SECRET = b"bot-sessions-test"
OK, INVALID_ARGUMENT = 0, 3


@dataclass
class Env:
    games: Games
    stub: game_pb2_grpc.GameServiceStub
    port: int
    redis: aioredis.Redis
    ns: str

    @property
    def key(self) -> tuple[tuple[str, str]]:
        return ((tokens.BOT_KEY_HEADER, tokens.bot_key(SECRET, self.ns)),)


@pytest.fixture
async def env(redis_url: str, redis_namespace: str) -> AsyncIterator[Env]:
    """A server over Redis-backed `Games` with two 4-seat all-bot games (random seats)."""
    client = connect(redis_url)
    games = Games(
        RedisEventStore(client, redis_namespace), RedisSide(client, redis_namespace), SECRET
    )
    server, port, checker = make_server(games)
    await server.start()
    await set_serving(checker)
    try:
        for k, g in enumerate(("g0", "g1")):
            seats = [Seat("bot:random", bot=True) for _ in range(4)]
            await games.create_game(
                NewMatch(match_id=g, ruleset="standard", seed=300 + k, seats=seats)
            )
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            yield Env(games, game_pb2_grpc.GameServiceStub(ch), port, client, redis_namespace)
    finally:
        await server.stop(None)
        keys = [k async for k in client.scan_iter(match=f"{redis_namespace}*", count=1000)]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def _published(env: Env) -> list[BotDecision]:
    rows: list[Any] = []
    for key in stream_keys(env.ns, DECISIONS.name):
        rows += await env.redis.xrange(key)
    return [decode(fields, BotDecision) for _, fields in rows]


def _answer(m: BotDecision, picks: list[str] | None = None) -> game_pb2.SubmitActionRequest:
    d = msgspec.json.decode(m.body, type=api.Decision)
    return game_pb2.SubmitActionRequest(
        game_id=m.game,
        seat_token=m.token,
        decision_id=m.decision,
        picks=list(api.default_answer(d).picks) if picks is None else picks,
    )


async def _until_sessions(games: Games, n: int) -> None:
    for _ in range(200):
        if len(games.sessions.open) == n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(games.sessions.open)} sessions open, not {n}")


@pytest.mark.parametrize("key", [None, "0" * 64])
async def test_a_session_needs_the_bot_key(env: Env, key: str | None) -> None:
    metadata = () if key is None else ((tokens.BOT_KEY_HEADER, key),)
    call = env.stub.BotSession(metadata=metadata)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call.read()
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert env.games.sessions.open == []


async def test_decisions_are_pushed_and_answers_taken_on_the_session(env: Env) -> None:
    """The first decisions went to the stream (no session yet); answered on a session, the
    next ones come on the session and the stream gets nothing more."""
    first = await _published(env)
    assert sorted(m.game for m in first) == ["g0", "g1"]
    call = env.stub.BotSession(metadata=env.key)
    await _until_sessions(env.games, 1)
    refused = _answer(first[1], picks=["card:99999"])
    await call.write(
        game_pb2.BotSessionRequest(
            answers=[
                game_pb2.BotAnswer(tag=7, action=_answer(first[0])),
                game_pb2.BotAnswer(tag=8, action=refused),
            ]
        )
    )
    results: dict[int, game_pb2.SubmitActionResult] = {}
    pushed: list[BotDecision] = []
    while len(results) < 2 or not pushed:
        reply = await call.read()
        results.update({r.tag: r.result for r in reply.results})
        pushed += [msgspec.msgpack.decode(d, type=BotDecision) for d in reply.decisions]
    assert results[7].code == OK and results[8].code == INVALID_ARGUMENT
    # the worker's own answer is not echoed back (it reads duplicate, version and over)
    assert results[7].response.version > 0 and not results[7].response.HasField("answer")
    [nxt] = pushed
    hot = await env.games.get(nxt.game)
    pending = api.pending(hot.game)
    assert pending is not None and nxt.game == first[0].game
    assert nxt.decision == hot.ids.opaque(pending.id) and nxt.seat == pending.seat
    assert nxt.version == hot.positions.position(pending.seat, hot.log.version)
    assert nxt.view is None  # a random seat reads no view
    assert len(await _published(env)) == 2  # nothing more on the stream
    call.cancel()


async def _results(call: Any, n: int) -> tuple[dict[int, Any], list[BotDecision]]:
    results: dict[int, game_pb2.SubmitActionResult] = {}
    pushed: list[BotDecision] = []
    while len(results) < n:
        reply = await call.read()
        results.update({r.tag: r.result for r in reply.results})
        pushed += [msgspec.msgpack.decode(d, type=BotDecision) for d in reply.decisions]
    return results, pushed


async def test_a_session_answers_what_it_was_pushed_without_a_token(env: Env) -> None:
    """An answer on a session may leave the seat token out for a decision pushed on that
    session and not answered yet (the engine takes the token it pushed it with); without a
    token every other answer is refused: a decision of the stream, one pushed on another
    session, one answered already. With its token the repeat is a duplicate, as always."""
    first = await _published(env)
    one = env.stub.BotSession(metadata=env.key)
    await _until_sessions(env.games, 1)
    await one.write(
        game_pb2.BotSessionRequest(answers=[game_pb2.BotAnswer(tag=1, action=_answer(first[0]))])
    )
    results, pushed = await _results(one, 1)
    while not pushed:  # (the next decision may come after the result)
        pushed = [msgspec.msgpack.decode(d, type=BotDecision) for d in (await one.read()).decisions]
    assert results[1].code == OK
    [nxt] = pushed
    two = env.stub.BotSession(metadata=env.key)
    await _until_sessions(env.games, 2)

    def bare(m: BotDecision, tag: int) -> game_pb2.BotAnswer:
        action = _answer(m)
        action.seat_token = ""
        return game_pb2.BotAnswer(tag=tag, action=action)

    # pushed on the first session, not the second; the stream's decision on neither
    await two.write(game_pb2.BotSessionRequest(answers=[bare(nxt, 2)]))
    await one.write(game_pb2.BotSessionRequest(answers=[bare(first[1], 3)]))
    refused = {**(await _results(two, 1))[0], **(await _results(one, 1))[0]}
    assert refused[2].code == refused[3].code == grpc.StatusCode.UNAUTHENTICATED.value[0]
    assert "no seat token" in refused[2].reason
    hot = await env.games.get(nxt.game)
    assert hot.ids.opaque(api.pending(hot.game).id) == nxt.decision  # nothing was answered
    # on its own session it is taken; again without the token refused, with it a duplicate
    await one.write(game_pb2.BotSessionRequest(answers=[bare(nxt, 4)]))
    assert (await _results(one, 1))[0][4].code == OK
    await one.write(game_pb2.BotSessionRequest(answers=[bare(nxt, 5)]))
    again = (await _results(one, 1))[0][5]
    assert again.code == grpc.StatusCode.UNAUTHENTICATED.value[0]
    await one.write(
        game_pb2.BotSessionRequest(answers=[game_pb2.BotAnswer(tag=6, action=_answer(nxt))])
    )
    repeat = (await _results(one, 1))[0][6]
    assert repeat.code == OK and repeat.response.duplicate
    # counted by result as SubmitAction counts (a batch's taken answers once it is done)
    want = {"ok": 2, "duplicate": 1, "unauthenticated": 3}
    counts = env.games.metrics.counts
    for _ in range(500):  # (a poll: the count may follow the result by a loop turn)
        if {k: counts.get(("actions", k)) for k in want} == want:
            break
        await asyncio.sleep(0.01)
    assert {k: counts.get(("actions", k)) for k in want} == want
    one.cancel()
    two.cancel()


async def test_a_session_that_ends_hands_its_decisions_to_the_stream(env: Env) -> None:
    first = await _published(env)
    call = env.stub.BotSession(metadata=env.key)
    await _until_sessions(env.games, 1)
    await call.write(
        game_pb2.BotSessionRequest(answers=[game_pb2.BotAnswer(tag=1, action=_answer(first[0]))])
    )
    pushed: list[BotDecision] = []
    while not pushed:
        pushed += [
            msgspec.msgpack.decode(d, type=BotDecision) for d in (await call.read()).decisions
        ]
    call.cancel()  # the worker went away holding it, unanswered
    await _until_sessions(env.games, 0)
    for _ in range(200):
        now = await _published(env)
        if len(now) == 3:
            break
        await asyncio.sleep(0.01)
    assert [m for m in now if m not in first] == pushed
    assert env.games.sessions.handed_back == 1 and env.games.sessions.outstanding == {}


async def test_a_hand_back_outlives_its_callers_cancellation(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session holding both games' decisions ends, and the hand-back's caller is cancelled
    while it publishes them (a killed worker's call is cancelled during the hand-back): both
    still reach the stream. (Cut off at its first await, the hand-back left the rest to their
    deadlines: tests/bots/test_worker.py's session kill test failed one run in six.)"""
    first = await _published(env)
    call = env.stub.BotSession(metadata=env.key)
    await _until_sessions(env.games, 1)
    await call.write(
        game_pb2.BotSessionRequest(
            answers=[game_pb2.BotAnswer(tag=k, action=_answer(m)) for k, m in enumerate(first)]
        )
    )
    for _ in range(300):
        if len(env.games.sessions.outstanding) == 2:
            break
        await asyncio.sleep(0.01)
    [(session, _), _] = env.games.sessions.outstanding.values()
    held = sorted(m.decision for _, m in env.games.sessions.outstanding.values())
    publish = env.games.side.publish

    async def slow_publish(message: Any) -> None:
        await asyncio.sleep(0.05)
        await publish(message)

    monkeypatch.setattr(env.games.side, "publish", slow_publish)
    caller = asyncio.create_task(env.games.hand_back(session))
    await asyncio.sleep(0.07)  # the first published, the second under way
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    for _ in range(100):
        if len(await _published(env)) == 4:
            break
        await asyncio.sleep(0.01)
    now = await _published(env)
    assert sorted(m.decision for m in now if m not in first) == held
    assert env.games.sessions.handed_back == 2 and env.games.sessions.outstanding == {}
    call.cancel()


async def test_grpc_engine_answers_what_its_sessions_push(env: Env) -> None:
    """GrpcEngine reads the key, opens a session, hands pushed decisions over and sends their
    answers back on the session, not in SubmitActions calls."""
    await env.redis.set(tokens.bot_key_name(env.ns), tokens.bot_key(SECRET, env.ns))
    engine = GrpcEngine([f"127.0.0.1:{env.port}"])
    got: asyncio.Queue[BotDecision] = asyncio.Queue()

    async def pushed(index: int, batch: list[tuple[bytes, BotDecision | None]]) -> None:
        assert index == 0
        for data, decoded in batch:  # decoded once by the session, as the bytes say
            assert decoded == msgspec.msgpack.decode(data, type=BotDecision)
            await got.put(decoded)

    async def key() -> str | None:
        value = await env.redis.get(tokens.bot_key_name(env.ns))
        return value.decode() if value else None

    runner = asyncio.create_task(engine.run_sessions(pushed, key, retry_s=0.05))
    try:
        await _until_sessions(env.games, 1)
        first = await _published(env)
        r = _answer(first[0])
        assert isinstance(
            await engine.submit(r.game_id, r.seat_token, r.decision_id, list(r.picks)), Submitted
        )
        for _ in range(5):  # a few rounds of push, answer
            m = await asyncio.wait_for(got.get(), 10)
            a = _answer(m)
            res = await engine.submit(a.game_id, a.seat_token, a.decision_id, list(a.picks))
            assert not res.duplicate
        answers, messages = engine.session_counts()
        assert answers == 6 and messages >= 1
        assert engine.batchers[0].items == 0  # no SubmitActions call
    finally:
        runner.cancel()
        await engine.close()


def test_a_held_decision_is_let_go_once_its_deadline_has_passed() -> None:
    """A decision answered on another engine (a people's game this engine made, whose answers
    go to a people's engine) is never `answered` here: it is let go at the second aging after
    its push, not held (and handed back to the stream, stale) until its session ends."""
    from services.engine.bot_sessions import BotSessions

    def decision(game: str, n: int) -> BotDecision:
        return BotDecision(
            game=game, decision=n, seat=0, player="bot:random", version=1, body=b"{}"
        )

    sessions = BotSessions(forget_s=0)
    sessions.start("b0")
    sessions.push([decision("g1", 1)])
    sessions.tick(1.0, 60.0)  # the first aging: nothing held since an earlier one
    assert set(sessions.outstanding) == {"g1"}
    sessions.push([decision("g2", 1)])
    sessions.tick(1.0, 60.0)
    assert set(sessions.outstanding) == {"g2"}  # g1 was held a whole aging: let go
    sessions.push([decision("g2", 2)])  # g2's next decision: held afresh
    sessions.tick(1.0, 60.0)
    assert set(sessions.outstanding) == {"g2"}
    sessions.tick(1.0, 60.0)
    assert sessions.outstanding == {}


def test_a_push_goes_to_one_session_a_game_as_the_stream_entry_would() -> None:
    """Each game's decisions go to one session (by the CRC of its id, while the set of
    sessions stays), as the stream entry's bytes; each session given one is told; with no
    session open every decision is handed back (to the stream)."""
    import zlib

    from services.contracts.streams import FIELD, encode
    from services.engine.bot_sessions import BotSessions

    def decision(game: str) -> BotDecision:
        return BotDecision(
            game=game, decision=7, seat=1, player="bot:random", version=3, body=b"{}"
        )

    sessions = BotSessions()
    msgs = [decision(f"g{i}") for i in range(8)]
    assert sessions.push(msgs) == msgs and sessions.pushed == 0
    one, two = sessions.start("b0"), sessions.start("b1")
    assert sessions.push(msgs) == []
    for s, k in ((one, 0), (two, 1)):
        mine = [m for m in msgs if zlib.crc32(m.game.encode()) % 2 == k]
        assert s.decisions == [encode(m)[FIELD] for m in mine]
        assert s.ready.is_set() == bool(mine)
    assert sessions.pushed == 8 and set(sessions.outstanding) == {m.game for m in msgs}
    assert sessions.outstanding["g0"][1] is msgs[0]
