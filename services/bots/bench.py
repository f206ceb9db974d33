"""Benchmark: all-bot games per second through real engine and bot worker processes.

    arena bench bots --games 20 --players 8 --engines 2 --bots 1,2 --policy random

For each bot worker count: a fresh namespace, the engines and bot workers started, every match
published at once, the clock stopped when the last game is archived. Prints JSON. Uses
REDIS_URL, else starts a local redis-server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..eventlog.redis_client import connect
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
            await publish_matches(client, ns, games, players, [policy], ruleset=ruleset)
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


@contextlib.contextmanager
def redis_url() -> Iterator[str]:
    """REDIS_URL, else a throwaway local redis-server."""
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    from ..eventlog.server import LocalRedis, find_server_binary

    binary = find_server_binary()
    if binary is None:
        raise SystemExit("no REDIS_URL and no redis-server found")
    with LocalRedis(binary) as server:
        yield server.url


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run each configuration, print JSON."""
    p = argparse.ArgumentParser(prog="arena bench bots")
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--players", type=int, default=8)
    p.add_argument("--ruleset", default="standard")
    p.add_argument("--engines", type=int, default=2)
    p.add_argument("--bots", default="1,2", help="bot worker counts to measure")
    p.add_argument("--policy", default="random", choices=("random", "heuristic"))
    p.add_argument("--timeout-s", type=float, default=600)
    a = p.parse_args(argv)
    runs = []
    with redis_url() as url:
        for n in (int(x) for x in a.bots.split(",")):
            runs.append(
                asyncio.run(
                    run_once(
                        url, a.games, a.players, a.engines, n, a.policy, a.ruleset, a.timeout_s
                    )
                )
            )
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


if __name__ == "__main__":
    raise SystemExit(main())
