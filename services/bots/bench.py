"""Benchmark: all-bot games per second through real engine and bot worker processes.

    arena bench bots --games 20 --players 8 --engines 2 --bots 1,2 --policy random

For each bot worker count: a fresh namespace, the engines and bot workers started, every match
published at once, the clock stopped when the last game is archived. Prints JSON. Uses
--redis-url, else starts a throw-away redis-server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from ..cliargs import bench_options, game_options, int_list
from ..eventlog.redis_client import connect
from ..eventlog.server import redis_or_throwaway
from .cluster import answers, archived, publish_matches, start_bots, start_engines, stop


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
        try:
            t0 = time.perf_counter()
            await publish_matches(client, ns, games, players, [policy], seed, ruleset)
            files: list[Path] = []
            while time.perf_counter() - t0 < timeout_s and len(files) < games:
                await asyncio.sleep(0.05)
                files = archived(archive)
            secs = time.perf_counter() - t0
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


def main(a: argparse.Namespace) -> int:
    """`arena bench bots`: run each configuration, print JSON."""
    runs = []
    try:
        with redis_or_throwaway(a.redis_url) as url:
            for n in a.bots:
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
    print(
        json.dumps(
            {
                "ruleset": a.ruleset,
                "players": a.players,
                "policy": a.policy,
                "cpus": os.cpu_count(),
                "load": os.getloadavg()[0],
                "runs": runs,
            }
        )
    )
    return 0
