"""`arena up` supervises: a child killed with -9 (an engine, Redis) is restarted where it was and
the platform keeps serving; a child that keeps dying stops the platform with a line that says
which and why, leaving no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from process_helpers import FREE_PORTS, alive, arena, descendants, find_below, until

from services.platform.supervise import CrashLoop, Policy, Restarter, how
from services.redisinfra.server import ping


def _serving(target: str) -> bool:
    try:
        with grpc.insecure_channel(target) as ch:
            reply = health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(service="arena.v1.GameService"), timeout=2
            )
    except grpc.RpcError:
        return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def test_up_restarts_a_killed_engine_and_redis_then_stops_on_a_crash_loop(tmp_path: Path) -> None:
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err:
        proc = arena(
            "up",
            "--var",
            str(tmp_path / "var"),
            "--engines",
            "1",
            "--bots",
            "1",
            "--think-ms",
            "0",
            "--restart-limit",
            "3",
            "--json",
            *FREE_PORTS,
            stdout=subprocess.PIPE,
            stderr=err,
        )
    kids: set[int] = set()
    try:
        assert proc.stdout is not None
        run = json.loads(proc.stdout.readline())
        kids = descendants(proc.pid)
        engine = run["engines"][0]
        old = find_below(proc.pid, "services.cli engine")
        assert old is not None and _serving(engine)
        os.kill(old, signal.SIGKILL)
        until(lambda: find_below(proc.pid, "services.cli engine") not in (None, old))
        until(lambda: _serving(engine))  # the same port as before: the others know it
        redis = find_below(proc.pid, "redis-server")
        assert redis is not None
        os.kill(redis, signal.SIGKILL)
        until(lambda: find_below(proc.pid, "redis-server") not in (None, redis))
        until(lambda: ping(run["redis_url"]))
        until(lambda: _serving(engine))
        assert proc.poll() is None
        text = err_path.read_text()
        assert "engine-0 exited (killed by SIGKILL)" in text and "engine-0 restarted" in text
        assert "redis exited (killed by SIGKILL)" in text and "redis restarted" in text
        # the bot worker dies three times in a row: a crash loop stops everything
        for _ in range(3):
            pid = None

            def found() -> bool:
                nonlocal pid
                pid = find_below(proc.pid, "services.cli bots")
                return pid is not None

            until(found)
            assert pid is not None
            kids |= descendants(proc.pid)
            os.kill(pid, signal.SIGKILL)
            until(lambda p=pid: not alive({p}))  # type: ignore[misc]
        assert proc.wait(30) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err_path.read_text()
    last = [x for x in text.splitlines() if "crash-looped:" in x]
    assert len(last) == 1, text
    assert last[0].startswith("arena up: bots-0 crash-looped: 3 exits in 60 s, the last one ")
    assert "killed by SIGKILL" in last[0] and "stopping (logs in" in last[0]
    assert text.splitlines()[-1] == "arena up: stopped (bots-0 crash-looped)"  # and why
    until(lambda: not alive(kids), timeout=10)
    assert not (tmp_path / "var" / "up.json").exists()


class _Proc:
    def __init__(self) -> None:
        self.returncode: int | None = 1

    def poll(self) -> int | None:
        return self.returncode


class _Child:
    name = "engine-0"

    def __init__(self) -> None:
        self.proc = _Proc()

    def alive(self) -> bool:
        return self.proc.returncode is None

    def last_words(self) -> str:
        return "boom"


class _Sup:
    def __init__(self) -> None:
        self.children = [_Child()]
        self.spawned = 0

    def respawn(self, child: _Child) -> _Child:
        self.spawned += 1
        child.proc.returncode = None
        return child


def test_restart_backs_off_and_gives_up_on_a_loop() -> None:
    """The policy alone, on a clock the test moves: the first exit restarts at once, the next
    ones after a growing delay, and the limit within the window is a crash loop."""
    sup = _Sup()
    r = Restarter(sup, None, Policy(limit=3, window_s=60, base_s=1, cap_s=8))  # type: ignore[arg-type]
    assert r.check(0.0) == [
        "engine-0 exited (exit code 1); last log line: boom; restarting in 0.0 s"
    ]
    assert r.check(0.0) == ["engine-0 restarted"] and sup.spawned == 1
    sup.children[0].proc.returncode = 1
    [line] = r.check(1.0)
    delay = float(line.rsplit("in ", 1)[1].split()[0])
    assert 0.5 <= delay <= 1.0
    assert r.check(1.0 + 0.4) == []  # not yet
    assert r.check(1.0 + 1.0) == ["engine-0 restarted"]  # the delay is at most base
    sup.children[0].proc.returncode = -9
    try:
        r.check(3.0)
    except CrashLoop as exc:
        assert str(exc) == (
            "engine-0 crash-looped: 3 exits in 60 s, the last one killed by SIGKILL; "
            "last log line: boom"
        )
    else:
        raise AssertionError("three exits in a minute is a crash loop")
    sup2 = _Sup()
    r2 = Restarter(sup2, None, Policy(limit=2, window_s=10))  # type: ignore[arg-type]
    r2.check(0.0)
    r2.check(0.0)
    sup2.children[0].proc.returncode = 1
    assert "restarting" in r2.check(100.0)[0]  # the first exit left the window: no loop
    assert how(0) == "exit code 0" and how(-15) == "killed by SIGTERM"
