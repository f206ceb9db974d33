"""`arena tournament` through the platform: it completes, writes its results, and when it is
stopped mid-run and started again with the same arguments it continues, not restarts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import redis as redis_py
from process_helpers import alive, arena, descendants, find_below, tournament, until

from services.contracts.streams import DECISIONS, stream_keys
from services.redisinfra.server import RedisServer

ARGS = [
    "--ruleset",
    "standard",
    "--players",
    "4",
    "--games",
    "3",
    "--policies",
    "heuristic,random",
    "--seed",
    "7",
    "--json",
]


def _journal(var: Path) -> list[dict[str, object]]:
    files = list((var / "tournaments").glob("*.jsonl"))
    if not files:
        return []
    return [json.loads(x) for x in files[0].read_text().splitlines() if x.strip()]


def _finish(var: Path) -> dict[str, object]:
    return tournament(var, *ARGS, timeout=180)[0]


def test_interrupted_tournament_continues(tmp_path: Path) -> None:
    var = tmp_path / "var"
    first = arena(
        "tournament",
        "--var",
        str(var),
        *ARGS,
        "--concurrency",
        "1",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    kids: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not _journal(var) and first.poll() is None:
        kids |= descendants(first.pid)
        time.sleep(0.2)
    kids |= descendants(first.pid)
    first.send_signal(signal.SIGTERM)
    first.wait(30)
    assert first.returncode in (0, 130), first.stderr.read() if first.stderr else ""
    deadline = time.monotonic() + 5
    while alive(kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(kids), "the interrupted tournament left processes behind"
    before = _journal(var)
    assert before, "no game was recorded before the interruption"

    result = _finish(var)
    assert result["games_done"] == 3
    assert result["resumed_with"] == len(before)
    assert result["games_played_now"] == 3 - len(before)  # not started over
    games = _journal(var)
    assert sorted(int(str(g["i"])) for g in games) == [0, 1, 2]
    assert games[: len(before)] == before
    st = result["standings"]
    assert isinstance(st, dict)
    assert set(st["per_policy"]) == {"heuristic", "random"}
    assert set(st["ratings"]) == {"heuristic", "random"}
    for g in games:
        assert sorted(str(x) for x in g["seats"]) == sorted(["heuristic", "random"] * 2)
    assert Path(str(result["journal"])).with_suffix(".json").exists()

    again = _finish(var)  # everything recorded: nothing is played, no platform started
    assert again["games_played_now"] == 0 and "platform" not in again
    assert again["standings"] == result["standings"]


def test_tournament_refuses_oracle(tmp_path: Path) -> None:
    p = arena(
        "tournament",
        "--var",
        str(tmp_path),
        "--policies",
        "oracle,random",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and "oracle" in err


GAMES = 4  # of the crash test: the bot worker is frozen before the kills, so 4 suffice


def test_tournament_rides_out_worker_crashes_and_a_redis_blip(tmp_path: Path) -> None:
    """The platform a tournament starts is kept alive by it: a killed engine and bot worker are
    restarted, a Redis restart is waited out; the run ends normally, without a traceback."""
    redis = RedisServer(tmp_path / "redis", fsync="always")
    var = tmp_path / "var"
    p = arena(
        "tournament",
        *("--var", str(var), "--redis-url", redis.url, "--games", str(GAMES), "--players", "4"),
        *("--policies", "random", "--concurrency", "4", "--json"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    decisions = stream_keys("arena", DECISIONS.name)  # every partition's
    try:
        pids: dict[str, int] = {}
        for what in ("services.cli engine", "services.cli bots"):

            def running(w: str = what) -> bool:
                pid = find_below(p.pid, w)
                if pid is not None:
                    pids[w] = pid
                return pid is not None or p.poll() is not None

            until(running, 60, what)
            assert what in pids, ("the run ended before the kill", p.communicate())
        with redis_py.Redis.from_url(redis.url) as r:  # play has begun: a game's log exists

            def playing() -> bool:
                # (not only a decision in Redis: bot sessions push most of them over gRPC, and
                # on a fast machine 8 games once ended before the test saw one there)
                logs = next(r.scan_iter(match="arena:*:g:*:log", count=1000), None)
                return logs is not None or sum(r.xlen(k) for k in decisions) > 0

            until(lambda: playing() or p.poll() is not None, 120, "play")
        # frozen, the bot worker answers nothing more: the run cannot end before the kills
        # (a loaded machine once took longer to find a worker than 8 games took to play)
        os.kill(pids["services.cli bots"], signal.SIGSTOP)
        assert p.poll() is None, ("the run ended before the kill", p.communicate())
        os.kill(pids["services.cli engine"], signal.SIGKILL)
        os.kill(pids["services.cli bots"], signal.SIGKILL)
        redis.process.kill()
        redis.process.wait()
        time.sleep(0.5)
        redis = RedisServer(tmp_path / "redis", redis.port, "always")
        out, err = p.communicate(timeout=180)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        redis.stop()
    assert p.returncode == 0, err
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert lines[0].startswith("arena tournament: starting a platform for this run"), err
    assert "engine-0 restarted" in err and "bots-0 restarted" in err, err
    assert json.loads(out)["games_done"] == GAMES
