"""Benchmark: all-bot games per second through real engine and bot worker processes.

    arena bench bots --games 20 --players 8 --engines 2 --bots 1,2 --policy random

For each bot worker count: a fresh namespace, the engines and bot workers started, every match
published at once, the clock stopped when the last game is archived; CPU per decision of every
process (Redis from INFO cpu) beside the rates; with --repeat the counts are interleaved (1, 2,
1, 2) and the spreads reported with the load average. Prints JSON. Uses --redis-url, else starts
a throw-away redis-server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from ..bots.cluster import answers, archived, publish_matches, start_bots, start_engines, stop
from ..cliargs import bench_options, game_options, int_list
from ..platform.procs import cpu_seconds
from ..redisinfra.redis_client import connect
from ..redisinfra.server import redis_or_throwaway
from . import kit


async def run_once(
    url: str,
    games: int,
    players: int,
    engines: int,
    bots: int,
    policy: str,
    ruleset: str,
    timeout_s: float,
    seed: int = 1,
) -> dict[str, Any]:
    """One measurement; returns its figures."""
    ns = f"bench-{uuid.uuid4().hex[:8]}"
    client = connect(url)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp)
        eng = start_engines(url, ns, engines, archive)
        workers = start_bots(url, ns, bots, [p for _, p in eng], policy)
        procs = {f"engine-{i}": p.pid for i, (p, _) in enumerate(eng)}
        procs |= {f"bots-{i}": p.pid for i, p in enumerate(workers)}
        try:
            cpu0 = {n: cpu_seconds(pid) for n, pid in procs.items()}
            cpu0["redis"] = await kit.redis_cpu_seconds(client)
            t0 = time.perf_counter()
            await publish_matches(client, ns, games, players, [policy], seed, ruleset)
            files: list[Path] = []
            while time.perf_counter() - t0 < timeout_s and len(files) < games:
                await asyncio.sleep(0.05)
                files = archived(archive)
            secs = time.perf_counter() - t0
            used = {n: cpu_seconds(pid) - cpu0[n] for n, pid in procs.items()}
            used["redis"] = await kit.redis_cpu_seconds(client) - cpu0["redis"]
            decisions = sum(len(answers(f)) for f in files)
        finally:
            stop(workers + [p for p, _ in eng])
            keys = [k async for k in client.scan_iter(match=f"{ns}*", count=1000)]
            if keys:
                await client.delete(*keys)
            await client.aclose()
    return {
        "bot_workers": bots,
        "engines": engines,
        "games": len(files),
        "seconds": round(secs, 2),
        "games_per_s": round(len(files) / secs, 3),
        "decisions_per_s": round(decisions / secs, 1),
        # every process's CPU over the run per decision (Redis: INFO cpu, whoever else uses it)
        "cpu_us_per_decision": {n: round(c * 1e6 / max(decisions, 1), 1) for n, c in used.items()}
        | {"total": round(sum(used.values()) * 1e6 / max(decisions, 1), 1)},
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench bots` options."""
    bench_options(p)
    game_options(p, players=8, games=20, options=False)
    p.add_argument("--engines", type=int, default=2, help="engine workers")
    p.add_argument("--bots", type=int_list, default="1,2", help="bot worker counts to measure")
    p.add_argument(
        "--policy", default="random", choices=("random", "heuristic"), help="every seat's policy"
    )
    p.add_argument("--timeout-s", type=float, default=600, help="give up a run after this long")
    p.add_argument("--repeat", type=int, default=1, help="rounds over the bot worker counts")
    p.add_argument(
        "--calibration-games",
        type=int,
        default=30,
        help="all-heuristic games (in-process, this ruleset and size) whose role guesses are"
        " scored: Brier and log-loss by round beside the uniform prior's (0: skip)",
    )


def calibration(ruleset: str, players: int, games: int, seed: int) -> dict[str, Any]:
    """The heuristic's role-guess calibration by round over ``games`` all-heuristic games."""
    from ..bots.selfplay import selfplay

    out = selfplay(ruleset, players, games, seed, ["heuristic"])
    return {"games": games, "by_round": out["role_guess"]}


def main(a: argparse.Namespace) -> int:
    """`arena bench bots`: run each configuration, print JSON."""
    if a.repeat < 1 or a.games < 1:
        print("arena bench bots: --games and --repeat must be at least 1", file=sys.stderr)
        return 2
    env = kit.Envelope("bots")
    runs = []
    try:
        with redis_or_throwaway(a.redis_url) as url:
            for n in [n for _ in range(a.repeat) for n in a.bots]:  # interleaved: 1, 2, 1, 2
                runs.append(
                    asyncio.run(
                        run_once(
                            url,
                            a.games,
                            a.players,
                            a.engines,
                            n,
                            a.policy,
                            a.ruleset,
                            a.timeout_s,
                            a.seed,
                        )
                    )
                )
    except RuntimeError as err:
        print(f"arena bench bots: {err}", file=sys.stderr)
        return 2
    by = [
        {
            "bot_workers": n,
            "decisions_per_s": kit.spread(
                [r["decisions_per_s"] for r in runs if r["bot_workers"] == n], 1
            ),
            "cpu_us_per_decision_total": kit.spread(
                [r["cpu_us_per_decision"]["total"] for r in runs if r["bot_workers"] == n], 1
            ),
        }
        for n in a.bots
    ]
    report: dict[str, Any] = {"ruleset": a.ruleset, "players": a.players, "policy": a.policy}
    if a.calibration_games > 0:
        report["calibration"] = calibration(a.ruleset, a.players, a.calibration_games, a.seed)
    print(json.dumps(env.wrap(report | {"by_bot_workers": by, "runs": runs}), ensure_ascii=False))
    return 0
