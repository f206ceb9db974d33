"""`arena matchmaker` through a `kill -9` of its Redis: health NOT_SERVING, Enqueue refused with
UNAVAILABLE and one plain line meanwhile; after the restart (AOF) health is SERVING and the
very first Enqueue succeeds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from process_helpers import arena, clean_env, until

from services.proto_gen.arena.v1 import matchmaker_pb2 as pb
from services.proto_gen.arena.v1 import matchmaker_pb2_grpc
from services.redisinfra.server import RedisServer
from services.rpc_guard import call_metadata

SECRET = "outage-test-" + "x" * 32


def _enqueue(stub: Any, player: str, timeout: float) -> Any:
    """Enqueue signed with the deployment's secret (the matchmaker takes no other call)."""
    req = pb.EnqueueRequest(player=player, mode="standard-5")
    meta = call_metadata(SECRET.encode(), "/arena.v1.Matchmaker/Enqueue", req)
    return stub.Enqueue(req, timeout=timeout, metadata=meta)


def _status(ch: grpc.Channel) -> int:
    reply = health_pb2_grpc.HealthStub(ch).Check(
        health_pb2.HealthCheckRequest(service="arena.v1.Matchmaker"), timeout=5
    )
    return int(reply.status)


def test_matchmaker_rides_out_a_redis_kill(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path / "redis")
    proc = arena(
        "matchmaker",
        *("--redis-url", redis.url, "--port", "0", "--ticket-ttl-ms", "600000"),
        env={**clean_env(), "ARENA_SECRET": SECRET},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    serving = health_pb2.HealthCheckResponse.SERVING
    try:
        assert proc.stdout is not None
        port = json.loads(proc.stdout.readline())["port"]
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = matchmaker_pb2_grpc.MatchmakerStub(ch)
            _enqueue(stub, "p1", 10)
            redis.process.kill()
            redis.process.wait()
            until(lambda: _status(ch) != serving, what="NOT_SERVING")
            with pytest.raises(grpc.RpcError) as err:
                _enqueue(stub, "p2", 30)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            details = err.value.details() or ""
            assert "Redis" in details and "Error" not in details and "\n" not in details
            redis = RedisServer(tmp_path / "redis", redis.port)
            until(lambda: _status(ch) == serving, what="SERVING again")
            t = _enqueue(stub, "p3", 10)
            assert t.ticket_id
        assert proc.poll() is None
    finally:
        proc.terminate()
        _, err_text = proc.communicate(timeout=10)
        redis.stop()
    assert "Traceback" not in err_text, err_text
