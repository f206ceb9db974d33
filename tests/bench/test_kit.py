"""The benchmarks' shared measuring (services/bench/kit.py) and the reports built on it: runs
interleaved A, B, A, B; CPU beside wall; ratios per round; the load and the machine in every
report. Shapes and sense only: no benchmark asserts a speed."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable

import pytest

from services.bench import e2e as e2e_bench
from services.bench import engine as engine_bench
from services.bench import kit
from services.bench import service as service_bench
from services.bench.eventlog import bench_eventlog
from services.bench.service import bench_service
from services.cli import main
from services.engine import grpc_server
from services.redisinfra.redis_client import connect
from services.redisinfra.server import redis_or_throwaway


def test_interleave_runs_the_variants_in_rounds() -> None:
    calls: list[str] = []

    def variant(name: str, units: int) -> tuple[str, Callable[[], int]]:
        def run() -> int:
            calls.append(name)
            return units

        return name, run

    out = kit.interleave([variant("a", 10), variant("b", 20)], repeats=3)
    assert calls == ["a", "b", "a", "b", "a", "b"]
    assert [s.units for s in out["a"]] == [10, 10, 10] and len(out["b"]) == 3


def test_cpu_is_measured_beside_wall() -> None:
    busy = kit.timed(lambda: sum(range(300_000)) and 1)
    idle = kit.timed(lambda: time.sleep(0.05) or 1)
    assert busy.cpu_s > 0 and idle.wall_s >= 0.05
    assert idle.cpu_s < idle.wall_s / 2  # sleeping costs wall time, not CPU


def test_ratio_is_taken_round_by_round() -> None:
    a = [kit.Sample(100, 1.0, 0.5), kit.Sample(100, 2.0, 0.5)]
    b = [kit.Sample(100, 2.0, 1.0), kit.Sample(100, 2.0, 2.0)]
    r = kit.ratio(a, b)
    # round 1: A twice as fast; round 2: as fast by wall, 4x by CPU
    assert r["wall"] == {"median": 1.5, "min": 1.0, "max": 2.0}
    assert r["cpu"] == {"median": 3.0, "min": 2.0, "max": 4.0}
    s = kit.summary(a, "decisions")
    assert s["decisions_per_s"] == {"median": 75.0, "min": 50.0, "max": 100.0}
    assert s["cpu_us_per_decision"]["median"] == 5000.0


def test_engine_bench_reports_the_peer_fork_and_load() -> None:
    out = engine_bench.bench_engine("standard", 5, 2, seed=3, repeat=2)
    assert out["bench"] == "engine" and len(out["load_avg"]["before"]) == 3
    assert out["machine"]["cpus"]
    run = out["runs"][0]
    assert run["arena"]["repeats"] == 2 and run["arena"]["decisions_per_run"] > 0
    assert run["arena"]["cpu_us_per_decision"]["median"] > 0
    if engine_bench.rlcard_uno() is None:
        assert out["peer"] == engine_bench.PEER_MISSING and "peer" not in run
    else:  # the peer plays at least as many decisions per round as we did
        assert run["peer"]["decisions_per_run"] >= run["arena"]["decisions_per_run"]
        assert run["ratio_vs_peer"]["wall"]["median"] > 0
    assert out["fork"]["us"]["median"] > 0 and out["fork"]["snapshot_bytes"]["median"] > 100


def test_engine_bench_names_a_missing_peer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "rlcard", None)  # import rlcard raises ImportError
    assert engine_bench.rlcard_uno() is None
    assert main(["bench", "engine", "--games", "1", "--players", "4", "--repeat", "1"]) == 0
    out, err = capsys.readouterr()
    assert "pip install rlcard" in err and len(err.splitlines()) == 1
    assert '"peer": "RLCard is not installed' in out


def test_eventlog_bench_interleaves_and_reports_redis_cpu() -> None:
    out = bench_eventlog(None, size=120, rounds=2)
    append = out["append_batch20"]
    assert append["adapter"]["repeats"] == 2 and append["raw_xadd_pipeline"]["repeats"] == 2
    assert append["adapter"]["redis_cpu_us_per_event"]["median"] >= 0
    assert append["ratio_adapter_vs_raw"]["wall"]["median"] > 0
    assert out["rebuild"]["ratio_rebuild_vs_raw"]["cpu"]["median"] > 0
    assert out["load_avg"]["after"]


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_service_bench_plays_every_game_beside_the_rules(store: str) -> None:
    out = bench_service("standard", 5, games=3, seed=2, repeat=2, store=store)
    rules, service = out["rules"], out["service"]
    assert out["bench"] == "service" and out["load_avg"]["after"]
    # the same seeded games and answers: as many decisions through the service as in-process
    assert rules["decisions_per_run"] == service["decisions_per_run"] > 0
    assert service["repeats"] == 2 and service["cpu_us_per_decision"]["median"] > 0
    assert out["service_vs_rules"]["cpu"]["median"] > 0
    assert ("redis_cpu_us_per_decision" in out) == (store == "redis")


def test_service_bench_sends_no_more_answers_a_message_than_the_engine_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """More games than a message may carry answers for (the engine refuses more than
    MAX_BATCH, and 1,000 games' first decisions came in one message): the bench splits them,
    as a bot worker does, and every game is played (it waited forever before)."""
    monkeypatch.setattr(service_bench, "MAX_BATCH", 2)
    monkeypatch.setattr(grpc_server, "MAX_BATCH", 2)  # (unsplit: refused, and the bench says so)
    out = bench_service("standard", 5, games=5, seed=2, repeat=1, store="memory")
    assert out["rules"]["decisions_per_run"] == out["service"]["decisions_per_run"] > 0


def test_e2e_memory_peaks_are_sampled_per_process() -> None:
    """`arena bench e2e`'s memory per live game: a process's peak resident set over a run,
    less what it held before."""
    assert e2e_bench.rss_kb(os.getpid()) > 0 and e2e_bench.rss_kb(2**22 + 7) == 0
    with e2e_bench._Peaks({"me": os.getpid()}, every_s=0.01) as peaks:
        held = bytearray(64 << 20)  # 64 MB, touched
        for i in range(0, len(held), 4096):
            held[i] = 1
        time.sleep(0.1)
        del held
    assert peaks.grown_kb()["me"] > 32 << 10


def test_service_bench_keeps_to_its_own_keys() -> None:
    """Given a Redis that holds other keys (a --redis-url), the bench writes under a namespace
    of its own and drops it after."""
    with redis_or_throwaway(None) as url:
        asyncio.run(_set(url, "keep:me"))
        bench_service("standard", 5, games=1, seed=2, repeat=1, store="redis", redis_url=url)
        assert asyncio.run(_keys(url)) == [b"keep:me"]


async def _set(url: str, key: str) -> None:
    client = connect(url)
    await client.set(key, b"1")
    await client.aclose()


async def _keys(url: str) -> list[bytes]:
    client = connect(url)
    keys = [k async for k in client.scan_iter()]
    await client.aclose()
    return keys
