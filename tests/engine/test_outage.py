"""An `arena engine` process through a `kill -9` of its Redis: health goes NOT_SERVING, callers
get UNAVAILABLE with one plain line, and after the restart (AOF) it serves again and picks up
matches published after the restart: its consumer did not die."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from process_helpers import until

from services.bots.cluster import start_engines
from services.contracts.streams import MATCHES, NewMatch, Seat
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from services.redisinfra.redis_client import connect
from services.redisinfra.server import RedisServer
from services.redisinfra.streams import publish_message


def _health(target: str) -> int:
    with grpc.insecure_channel(target) as ch:
        reply = health_pb2_grpc.HealthStub(ch).Check(
            health_pb2.HealthCheckRequest(service="arena.v1.GameService"), timeout=5
        )
        return int(reply.status)


def _view(target: str, game: str) -> game_pb2.GetViewResponse:
    with grpc.insecure_channel(target) as ch:
        reply: game_pb2.GetViewResponse = game_pb2_grpc.GameServiceStub(ch).GetView(
            game_pb2.GetViewRequest(game_id=game), timeout=10
        )
        return reply


def _created(target: str, game: str) -> bool:
    try:
        return _view(target, game).version > 0
    except grpc.RpcError as err:
        if err.code() != grpc.StatusCode.NOT_FOUND:
            raise
        return False


async def _publish(url: str, ns: str, game: str) -> None:
    client = connect(url)
    seats = [Seat(f"bot{s}", True) for s in range(4)]
    match = NewMatch(match_id=game, ruleset="standard", seats=seats, seed=7)
    await publish_message(client, ns, MATCHES, match)
    await client.aclose()


async def test_engine_rides_out_a_redis_kill(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path / "redis")
    ns = "outage"
    [(proc, port)] = start_engines(redis.url, ns, 1, tmp_path / "archive")
    target = f"127.0.0.1:{port}"
    serving, not_serving = health_pb2.HealthCheckResponse.SERVING, 2
    try:
        assert _health(target) == serving
        redis.process.kill()
        redis.process.wait()
        until(lambda: _health(target) == not_serving)
        with pytest.raises(grpc.RpcError) as err:
            _view(target, "g-any")
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        details = err.value.details() or ""
        assert "Redis" in details and "\n" not in details and "Error 111" not in details
        redis = RedisServer(tmp_path / "redis", redis.port)  # reloads the AOF
        until(lambda: _health(target) == serving)
        await _publish(redis.url, ns, "g-after")  # the match consumer is alive
        until(lambda: _created(target, "g-after"), timeout=10)
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)
        redis.stop()
