"""`arena tournament` when Redis is away or a game stops (#46 items 3, 5): it gives up on an
outage after a stated time (one line when it starts, with how long it waits; one when it gives
up, saying how to continue; no traceback), and it names a game that has not moved. It waited
16 minutes against a dead cluster, printing ~23 "Topology refresh failed" lines a minute, and
said only "is a bot worker running?" about two games that ran on without end."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from process_helpers import arena
from redis.exceptions import ConnectionError as RedisConnectionError

from services.contracts.streams import game_key
from services.redisinfra.reconnect import Outage, RedisGone
from services.redisinfra.redis_client import connect
from services.redisinfra.server import RedisServer
from services.tournaments import runner
from services.tournaments.spec import Spec


async def test_an_outage_longer_than_the_wait_ends_with_one_line() -> None:
    outage = Outage("arena tournament", give_up_s=0.3)
    t0 = time.monotonic()
    with pytest.raises(RedisGone, match=r"Redis unavailable \(ConnectionError\) for \d s; gave up"):
        for _ in range(100):
            await outage.failed(RedisConnectionError("refused"))
    assert time.monotonic() - t0 < 5


@pytest.mark.slow  # (a platform of its own: ~15 s)
def test_the_tournament_gives_up_on_a_dead_redis(tmp_path: Path) -> None:
    """Redis killed under a running tournament: it says so once, says how long it waits, then
    gives up in one line with how to continue."""
    server = RedisServer(tmp_path / "redis")
    p = arena(
        "tournament",
        "--var",
        str(tmp_path / "var"),
        "--redis-url",
        server.url,
        "--games",
        "400",
        "--policies",
        "random",
        "--engines",
        "1",
        "--bots",
        "1",
        "--json",
        "--outage-give-up-s",
        "3",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        journal = tmp_path / "var" / "tournaments"
        deadline = time.monotonic() + 120
        while not any(f.stat().st_size for f in journal.glob("*.jsonl")):  # under way
            assert p.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        server.process.kill()
        server.process.wait()
        _, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    lines = [x for x in err.splitlines() if "tournament" in x]
    assert p.returncode == 2, err
    assert "Traceback" not in err and "Topology refresh" not in err, err
    assert any("retrying for 3 s" in x for x in lines), err
    assert lines[-1].startswith("arena tournament: Redis unavailable") and lines[-1].endswith(
        "run the same command again to continue"
    ), err


async def test_a_game_that_does_not_move_is_named(
    redis_url: str, redis_namespace: str, tmp_path: Path
) -> None:
    ns = redis_namespace
    client: aioredis.Redis = connect(redis_url)
    spec = Spec("standard", 4, 2, ["random"])
    gid = spec.game_id(0)
    long_ago = int(time.time() * 1000) - 120_000
    await client.xadd(game_key(ns, gid, "log"), {"e": b"x", "t": str(long_ago)}, id="7-0")
    loop = runner._Loop(spec, client, ns, tmp_path, [0, 1], tmp_path / "j.jsonl", 2)
    loop.inflight = {gid, spec.game_id(1)}  # (the second has no log yet)
    try:
        said = await loop.stalled_games()
        assert said == [
            f"game {gid} has not moved for 120 s (its log at entry 7); the engines' watchdog "
            "recovers it or ends it as abandoned"
        ]
        assert await loop.stalled_games() == []  # said once per stall
    finally:
        await client.delete(game_key(ns, gid, "log"))
        await client.aclose()
