"""`arena bench e2e`: the same seeded games in-process and through the platform.

In-process: the rules engine and the policy in one loop (no I/O), run `repeat` times (the
median is the baseline; min and max show the machine's noise). Through the platform: engine
and bot workers as processes, a real redis-server, real gRPC, every game logged, hash-chained,
archived to a file; the bench process only publishes the matches (all at once, as a tournament
does) and waits on `{ns}:finished`. Each platform run gets a fresh Redis and fresh workers.

What each run reports beside games/s: CPU seconds of every process over the timed window (a
worker near 100 % of a core is the bottleneck of a single-threaded Python process; a sum near
the machine's cores means the machine is), and what the workers said when they stopped: how
many answers travelled per SubmitActions call and per Redis pipeline, and the mean time a bot
held a decision and the engine an answer (their exit lines, services/*/worker.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ..bots.random_policy import RandomPolicy
from ..bots.selfplay import play_game
from ..contracts.streams import NewMatch
from ..eventlog.redis_client import connect
from ..rules import api
from .matches import Games, bot_match
from .procs import cpu_seconds
from .up import Platform, Running, UpConfig

WARMUP = 2


def _in_process_once(
    ruleset: str, players: int, games: int, seed: int, policy: str
) -> tuple[float, int]:
    t0 = time.perf_counter()
    decisions = 0
    for i in range(games):
        if policy == "random":
            g = api.new_game(ruleset, players, seed + i)
            bots = [RandomPolicy((seed + i) * 1000 + s) for s in range(players)]
            api.advance(g)
            while not g.over:
                d = g.pending
                assert d is not None
                api.submit(g, bots[d.seat].act(d))
                decisions += 1
        else:
            _, counts = play_game(ruleset, players, seed + i, [policy])
            decisions += counts["decisions"]
    return time.perf_counter() - t0, decisions


def in_process(
    ruleset: str, players: int, games: int, seed: int, policy: str, repeat: int = 3
) -> dict[str, Any]:
    """games/s of the seeded games in one process (random: engine + policy; heuristic: with
    every seat's view folded, as the bot service does): the median of `repeat` runs."""
    runs = [_in_process_once(ruleset, players, games, seed, policy) for _ in range(repeat)]
    rates = sorted(games / secs for secs, _ in runs)
    secs = statistics.median(secs for secs, _ in runs)
    return {
        "games": games,
        "seconds": round(secs, 3),
        "games_per_s": round(games / secs, 3),
        "games_per_s_min_max": [round(rates[0], 3), round(rates[-1], 3)],
        "repeats": repeat,
        "decisions_per_game": round(runs[0][1] / max(games, 1), 1),
    }


async def _drive(run: Running, ids: list[str], matches: list[NewMatch], timeout: float) -> None:
    client = connect(run.redis_url)
    try:
        games = Games(client, run.namespace, None)
        await games.mark()
        for m in matches:
            await games.publish(m)
        left = set(ids)
        deadline = time.monotonic() + timeout
        while left:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{len(left)} of {len(ids)} games unfinished after {timeout:.0f} s"
                )
            left.difference_update(await games.finished(block_ms=500))
    finally:
        await client.aclose()


def through_platform(
    ruleset: str,
    players: int,
    games: int,
    seed: int,
    policy: str,
    engines: int,
    bots: int,
    redis_url: str | None,
) -> dict[str, Any]:
    """games/s through `engines` engine workers and `bots` bot workers, and CPU per process."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        cfg = UpConfig(
            engines=engines,
            bots=bots,
            var_dir=Path(tmp),
            persist=False,
            redis_url=redis_url,
            matchmaker=False,
            replay=False,
            engine_port=0,
            metrics_port=0,
            bot_policy=policy,
            namespace=f"bench-{os.getpid()}-{engines}",
        )
        with Platform(cfg) as platform:
            run = platform.start()
            seats = [policy] * players
            warm = [bot_match(f"warm-{i}", ruleset, seats, 10_000 + i) for i in range(WARMUP)]
            asyncio.run(_drive(run, [m.match_id for m in warm], warm, 120))
            procs = {c.name: c.pid for c in platform.sup.children}
            if platform.redis is not None:
                procs["redis"] = platform.redis.pid
            ms = [bot_match(f"g-{i}", ruleset, seats, seed + i) for i in range(games)]
            load = os.getloadavg()[0]
            cpu0 = {n: cpu_seconds(p) for n, p in procs.items()}
            t0 = time.perf_counter()
            asyncio.run(_drive(run, [m.match_id for m in ms], ms, 60 + 10 * games))
            secs = time.perf_counter() - t0
            cpu = {n: round((cpu_seconds(p) - cpu0[n]) / secs, 3) for n, p in procs.items()}
        workers = worker_reports(Path(tmp) / "logs")  # written as the workers stopped
    return {
        "engines": engines,
        "bots": bots,
        "games": games,
        "seconds": round(secs, 3),
        "games_per_s": round(games / secs, 3),
        "cpu_share": cpu,
        "loadavg_1m_before": round(load, 2),
        "bottleneck": bottleneck(cpu),
        "workers": workers,
    }


def worker_reports(log_dir: Path) -> dict[str, Any]:
    """Batch sizes and mean latencies from the workers' last log lines (warm-up included)."""
    out: dict[str, Any] = {}
    for path in sorted(log_dir.glob("*.log")):
        for line in reversed(path.read_text(encoding="utf-8", errors="replace").splitlines()):
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if isinstance(report, dict) and "batched" in report:
                out[path.stem] = _summary(report)
                break
    return out


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    b = report["batched"]
    if "answers" in b:  # a bot worker
        return {
            "answers": b["answers"],
            "answers_per_submit_call": round(b["answers"] / max(b["submit_calls"], 1), 1),
            "decision_held_ms_mean": report.get("answer_ms_mean"),
        }
    appends = b.get("appends", {})
    return {
        "appends": appends.get("commands", 0),
        "appends_per_pipeline": round(
            appends.get("commands", 0) / max(appends.get("pipelines", 0), 1), 1
        ),
        "answer_ms_mean": report.get("action_ms_mean"),
    }


def bottleneck(cpu: dict[str, float], cores: int | None = None) -> str:
    """Name what limited a run from each process's CPU share (1.0 = one core busy)."""
    cores = cores or os.cpu_count() or 1
    total = sum(cpu.values())
    top, share = max(cpu.items(), key=lambda kv: kv[1])
    kind = top.rsplit("-", 1)[0]
    if share >= 0.85:
        return f"{kind} ({top} used {share:.0%} of a core; one Python process is one core)"
    if total >= 0.85 * cores:
        return (
            f"the machine's {cores} cores ({total:.2f} cores busy in our processes; "
            f"largest: {top} {share:.0%})"
        )
    return (
        f"none saturated in our processes ({total:.2f} cores busy, largest {top} "
        f"{share:.0%}): waiting on round trips (gRPC, Redis) or on other load"
    )


def bench_e2e(
    ruleset: str,
    players: int,
    games: int,
    seed: int,
    policy: str,
    engine_counts: list[int],
    bots: int,
    redis_url: str | None,
    repeat: int = 3,
) -> dict[str, Any]:
    """The whole benchmark for one bot policy as JSON-ready data."""
    base = in_process(ruleset, players, games, seed, policy, repeat)
    runs = [
        through_platform(ruleset, players, games, seed, policy, k, bots, redis_url)
        for k in engine_counts
    ]
    for r in runs:
        r["ratio_to_in_process"] = round(r["games_per_s"] / base["games_per_s"], 3)
    out: dict[str, Any] = {
        "ruleset": ruleset,
        "players": players,
        "games": games,
        "seed": seed,
        "policy": policy,
        "cores": os.cpu_count(),
        "in_process": base,
        "platform": runs,
    }
    by = {r["engines"]: r for r in runs}
    if 1 in by and 2 in by:
        out["two_vs_one_engines"] = round(by[2]["games_per_s"] / by[1]["games_per_s"], 3)
    return out
