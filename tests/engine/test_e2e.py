"""End to end: two `arena engine` processes, a bot loop over gRPC, one worker killed mid-game.

Every game must still finish, be archived, and pass verify. 8 concurrent games here; the issue's
20 under `-m slow`.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import grpc
import msgspec
import pytest
import redis.asyncio as aioredis

from services.bots.cluster import SECRET, archived, start_engines
from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.contracts.streams import DECISIONS, MATCHES, BotDecision, NewMatch, Seat, decode
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from services.redisinfra.partitions import group_consumers
from services.redisinfra.streams import Message, publish_message
from services.rules import api
from services.verify import verify

PLAYERS = 4


async def test_two_workers_one_killed(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    await two_workers_one_killed(redis_url, redis_namespace, redis_client, tmp_path, 8)


@pytest.mark.slow
async def test_two_workers_one_killed_twenty_games(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    """The issue's: two workers, 20 concurrent bot games, one killed mid-game."""
    await two_workers_one_killed(redis_url, redis_namespace, redis_client, tmp_path, 20)


async def two_workers_one_killed(
    redis_url: str, ns: str, redis_client: aioredis.Redis, tmp_path: Path, games: int
) -> None:
    """``games`` bot games on two engine workers, the first killed (-9) once the bots have
    answered six decisions a game on average: every game finishes, is archived and verifies."""
    archive = tmp_path / "archive"
    workers = start_engines(redis_url, ns, 2, archive)  # share SECRET, claim idle after 1 s
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _, port in workers]
    stubs = [game_pb2_grpc.GameServiceStub(ch) for ch in channels]
    alive = [True, True]
    answered = 0
    try:
        for i in range(games):
            match = NewMatch(
                match_id=f"{ns}-g{i}",
                ruleset="standard",
                seats=[Seat(f"bot{s}", True) for s in range(PLAYERS)],
                seed=1000 + i,
            )
            await publish_message(redis_client, ns, MATCHES, match)

        async def answer(msg: Message) -> None:
            nonlocal answered
            game = decode(msg.fields, BotDecision).game
            d = msgspec.json.decode(decode(msg.fields, BotDecision).body, type=api.Decision)
            a = RandomPolicy(d.id * 31 + d.seat).act(d)
            token = tokens.issue(SECRET.encode(), game, d.seat)
            for picks in (list(a.picks), list(api.default_answer(d).picks)):
                for k in range(4):
                    w = (d.id + k) % 2
                    if not alive[w]:
                        continue
                    try:
                        await stubs[w].SubmitAction(
                            game_pb2.SubmitActionRequest(
                                game_id=game, seat_token=token, decision_id=d.id, picks=picks
                            ),
                            timeout=5,
                        )
                        answered += 1
                        return
                    except grpc.aio.AioRpcError as err:
                        if err.code() == grpc.StatusCode.INVALID_ARGUMENT:
                            break  # try the default answer
                        if err.code() in (
                            grpc.StatusCode.FAILED_PRECONDITION,
                            grpc.StatusCode.NOT_FOUND,
                        ):
                            return  # stale message: the game moved on
                        if err.code() == grpc.StatusCode.UNAVAILABLE:
                            continue
                        raise

        stop = asyncio.Event()
        bots = [  # three bot consumers, each on every partition's decisions stream
            c
            for i in range(3)
            for c in group_consumers(redis_client, ns, DECISIONS, f"b{i}", min_idle_ms=1000)
        ]
        loops = [asyncio.create_task(b.run(answer, stop, block_ms=200)) for b in bots]
        deadline = time.monotonic() + 50
        while answered < 60 * games // 10 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        workers[0][0].send_signal(signal.SIGKILL)  # kill -9 mid-game
        alive[0] = False
        files: list[Path] = []
        while time.monotonic() < deadline:
            files = archived(archive)  # not the temporary files being written
            if len(files) == games:
                break
            await asyncio.sleep(0.2)
        stop.set()
        await asyncio.gather(*loops, return_exceptions=True)
        assert workers[1][0].poll() is None, "the surviving worker died"
        assert len(files) == games, f"{len(files)} of {games} games finished"
        for f in files:
            report = verify(f)
            assert report.ok, (f.name, report.divergence)
    finally:
        for proc, _ in workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc, _ in workers:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        for ch in channels:
            await ch.close()
        keys = [k async for k in redis_client.scan_iter(match=f"{ns}*", count=1000)]
        if keys:
            await redis_client.delete(*keys)
