"""`arena up` as a user runs it: every service starts, the viewer answers over HTTP, the engines
answer gRPC health checks, demo games appear, and SIGTERM leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from platform_helpers import alive, arena, clean_env, descendants

FREE = ["--http-port", "0", "--replay-grpc-port", "0", "--matchmaker-port", "0",
        "--engine-port", "0", "--metrics-port", "0"]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as r:
        body: bytes = r.read()
        assert r.status == 200
        return body


def test_up_serves_and_stops_clean(tmp_path: Path) -> None:
    var = tmp_path / "var"
    proc = arena("up", "--var", str(var), "--engines", "2", "--bots", "1", "--demo", "1",
                 "--json", *FREE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kids: set[int] = set()
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        run = json.loads(line)
        kids = descendants(proc.pid)
        # redis-server, 2 engines, 1 bot worker, the matchmaker, the replay server
        assert len(kids) >= 6, kids
        assert run["redis_started"]
        assert any((var / "redis").glob("appendonly*")), "no AOF under VAR/redis"
        assert json.loads((var / "up.json").read_text())["viewer_url"] == run["viewer_url"]
        assert b"<html" in _get(run["viewer_url"]).lower()
        for target in run["engines"]:
            with grpc.insecure_channel(target) as ch:
                reply = health_pb2_grpc.HealthStub(ch).Check(
                    health_pb2.HealthCheckRequest(service="arena.v1.GameService"), timeout=5)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
        deadline = time.monotonic() + 30
        listed: list[object] = []
        while time.monotonic() < deadline and not listed:
            listed = json.loads(_get(run["viewer_url"] + "api/games"))["games"]
            time.sleep(0.5)
        assert listed, "the demo game never showed up in the viewer's lobby"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0
    deadline = time.monotonic() + 5
    while alive(kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(kids), f"left behind: {alive(kids)}"
    assert not (var / "up.json").exists()


def test_up_reports_an_unreachable_redis_url(tmp_path: Path) -> None:
    env_bad = {"REDIS_URL": "redis://127.0.0.1:1/0"}
    p = arena("up", "--var", str(tmp_path / "v"), *FREE, env={**clean_env(), **env_bad},
              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 2 and "no Redis answers" in err
    assert not os.path.exists(tmp_path / "v" / "up.json")
