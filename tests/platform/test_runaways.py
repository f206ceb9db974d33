"""#46's goal for runaway games: random 谋攻 (jinyu, 5 seats, mougong) through the platform,
where about 1 in 700 games once never ended (508,000 entries in 16 minutes for two, Redis from
3.5 to 119 MB). Every game must end (by its rules, whose 20th reshuffle is a draw, or by the
platform's cap on decisions and log entries) and Redis's memory stay under 2x its
idle-plus-live figure: the peak while the first games play (Redis idle plus the games in
flight) bounds the peak of the whole run. `-m slow`, 4,000 games (ARENA_RUNAWAY_GAMES to
change it); it prints the figures. The default suite's small version is
tests/engine/test_watchdog.py (a game ended at each cap, and verified).
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import redis
from process_helpers import arena_up, tournament
from prometheus_client.parser import text_string_to_metric_families

from services.redisinfra.server import free_port

OPTIONS = '{"mougong": true}'


def _tournament(var: Path, games: int, seed: int, timeout_s: float) -> dict[str, Any]:
    result, err = tournament(
        var,
        *("--ruleset", "jinyu", "--players", "5", "--options", OPTIONS, "--policies", "random"),
        *("--games", str(games), "--seed", str(seed), "--concurrency", "40"),
        timeout=timeout_s,
    )
    assert "Traceback" not in err, err
    assert result["games_done"] == games
    return result


class Peak:
    """Redis's used_memory, sampled every half second: the peak since the last `reset`."""

    def __init__(self, r: redis.Redis) -> None:
        self.r, self.peak, self.stop = r, 0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            try:
                self.peak = max(self.peak, int(self.r.info("memory")["used_memory"]))
            except redis.RedisError:
                continue

    def reset(self) -> int:
        peak, self.peak = self.peak, 0
        return peak


def _ended_by_platform(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url, timeout=5) as r:
        text = bytes(r.read()).decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "arena_engine_games_ended_by_platform_total":
                out[s.labels["reason"]] = s.value
    return out


def _run(tmp_path: Path, first: int, second: int, timeout_s: float) -> dict[str, Any]:
    var = tmp_path / "var"
    metrics = free_port()
    with arena_up(
        *("--var", str(var), "--no-persist", "--think-ms", "0"),
        *("--metrics-port", str(metrics)),  # over FREE_PORTS's 0: the engine's counters are read
        *("--matchmaker-metrics-port", "0", "--replay-metrics-port", "0"),
        stop_s=60,
    ) as (_, run):
        r = redis.Redis.from_url(run["redis_url"])
        idle = int(r.info("memory")["used_memory"])
        peak = Peak(r)
        t0 = time.monotonic()
        t1 = _tournament(var, first, 1, timeout_s)
        live_first = peak.reset()
        t2 = _tournament(var, second, 1_000_000, timeout_s)
        live_rest = peak.reset()
        took = time.monotonic() - t0
        ended = _ended_by_platform(run["metrics"][0])
        peak.stop.set()
        r.close()
    draws = sum(
        1
        for f in (var / "tournaments").glob("*.jsonl")
        for line in f.read_text().splitlines()
        if line.strip() and json.loads(line).get("draw")
    )
    figures = {
        "games": first + second,
        "seconds": round(took, 1),
        "games_per_s": [t1["games_per_s_now"], t2["games_per_s_now"]],
        "used_memory_idle": idle,
        "peak_first": live_first,
        "peak_rest": live_rest,
        "ratio": round(live_rest / max(1, live_first), 3),
        "draws": draws,
        "ended_by_platform": ended,
        "load": os.getloadavg(),
    }
    print(json.dumps(figures))
    assert live_rest < 2 * live_first, figures  # idle plus live: the first games' peak
    return figures


@pytest.mark.slow
def test_thousands_of_random_mougong_games_all_end(tmp_path: Path) -> None:
    games = int(os.environ.get("ARENA_RUNAWAY_GAMES", "4000"))
    _run(tmp_path, 200, games - 200, 7200)
