"""`arena up` as a user runs it: every service starts, the viewer answers over HTTP, the engines
answer gRPC health checks, demo games appear, and SIGTERM leaves no process behind."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from process_helpers import FREE_PORTS as FREE
from process_helpers import alive, arena, clean_env, descendants

from services.cli import parser
from services.platform.up import Platform, UpConfig


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as r:
        body: bytes = r.read()
        assert r.status == 200
        return body


def test_up_serves_and_stops_clean(tmp_path: Path) -> None:
    var = tmp_path / "var"
    proc = arena(
        "up",
        "--var",
        str(var),
        "--engines",
        "2",
        "--bots",
        "1",
        "--demo",
        "1",
        "--json",
        *FREE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
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
        # the started Redis has a password, and no child shows it on its command line (ps)
        password = run["redis_url"].split("://:", 1)[1].split("@", 1)[0]
        assert len(password) >= 32, run["redis_url"]
        for kid in kids:
            with contextlib.suppress(FileNotFoundError):  # (a short-lived helper, gone)
                argv = Path(f"/proc/{kid}/cmdline").read_bytes()
                assert password.encode() not in argv, argv.replace(b"\0", b" ")[:300]
        assert run["metrics"] == []  # --metrics-port 0: no /metrics on any service
        assert any((var / "redis").glob("appendonly*")), "no AOF under VAR/redis"
        assert json.loads((var / "up.json").read_text())["viewer_url"] == run["viewer_url"]
        assert b"<html" in _get(run["viewer_url"]).lower()
        for target in run["engines"]:
            with grpc.insecure_channel(target) as ch:
                reply = health_pb2_grpc.HealthStub(ch).Check(
                    health_pb2.HealthCheckRequest(service="arena.v1.GameService"), timeout=5
                )
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
    p = arena(
        "up",
        "--var",
        str(tmp_path / "v"),
        *FREE,
        env={**clean_env(), **env_bad},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = p.communicate(timeout=30)
    assert p.returncode == 2 and "no Redis answers" in err
    assert not os.path.exists(tmp_path / "v" / "up.json")


def test_up_serves_metrics_of_the_matchmaker_and_the_replay_server(
    tmp_path: Path, redis_url: str, redis_namespace: str
) -> None:
    """Port 0: each binds a free port and says which; up.json lists the URLs."""
    cfg = UpConfig(
        engines=0,
        bots=0,
        var_dir=tmp_path / "var",
        namespace=redis_namespace,
        redis_url=redis_url,
        persist=False,
        http_port=0,
        replay_grpc_port=0,
        matchmaker_port=0,
        matchmaker_metrics_port=0,
        replay_metrics_port=0,
    )
    with Platform(cfg) as platform:
        run = platform.start()
        assert json.loads(run.to_json())["metrics"] == run.metrics
        mm, rp = run.metrics
        assert (
            all(u.startswith("http://127.0.0.1:") and u.endswith("/metrics") for u in run.metrics)
            and mm != rp
        )
        assert b"arena_matchmaker_tables_formed" in _get(mm)
        assert json.loads(_get(run.viewer_url + "api/games"))["games"] == []
        counted = 'arena_replay_http_requests_total{route="games",status="2xx"} 1.0'
        deadline = time.monotonic() + 5  # counted once the response is out: poll
        while counted not in _get(rp).decode():
            assert time.monotonic() < deadline, "GET /api/games not counted"
            time.sleep(0.05)


def test_up_metrics_port_defaults_are_documented() -> None:
    d = UpConfig()
    assert (d.metrics_port, d.matchmaker_metrics_port, d.replay_metrics_port) == (9100, 9300, 9301)
    a = parser().parse_args(["up", "--matchmaker-metrics-port", "0", "--replay-metrics-port", "0"])
    assert (a.matchmaker_metrics_port, a.replay_metrics_port) == (0, 0)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "9300" in readme and "9301" in readme
