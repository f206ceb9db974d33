"""`arena up --demo N`: keep N bot games running so the web viewer has something to show.

Each game is a bot-only table published to the engine workers (heuristic against random,
5 seats, the standard ruleset with its generals dealt in a draft); when one ends, the next
starts. The pace is the bots' think time (`arena up --think-ms`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from redis.exceptions import RedisError

from ..redisinfra.reconnect import Outage, until_reachable
from ..redisinfra.redis_client import connect
from ..running import Running
from ..tournaments.matches import Games, bot_match

POLICIES = ["heuristic", "random", "heuristic", "random", "heuristic"]


async def keep_playing(
    run: Running,
    n: int,
    stop: asyncio.Event,
    policies: list[str] | None = None,
    options: dict[str, object] | None = None,
    prefix: str = "demo",
) -> None:
    """Until ``stop``: keep ``n`` bot games live through the platform (by default the demo's:
    heuristic against random, standard with generals)."""
    seats = policies or POLICIES
    opts = {"generals": "draft"} if options is None else options
    client = connect(run.redis_url)
    games = Games(client, run.namespace, Path(run.archive_dir))
    live: set[str] = set()
    count = 0
    outage = Outage("arena up: demo games")
    try:
        await until_reachable(client, "arena up: demo games", stop)
        await games.mark()
        while not stop.is_set():
            try:
                while len(live) < n:
                    count += 1
                    gid = f"{prefix}-{int(time.time())}-{count}"
                    match = bot_match(gid, "standard", seats, count, opts)
                    await games.publish(match)
                    live.add(gid)
                for gid in await games.finished(block_ms=500):
                    live.discard(gid)
            except Exception as exc:  # noqa: BLE001 - an outage or any failed round: go on
                await outage.failed(exc, stop)
            else:
                outage.ok()
    finally:
        with contextlib.suppress(RedisError, OSError):
            await client.aclose()
