"""The read side's feeds wait for new entries together (readside/tail.py `Tails`): on one Redis
one blocking XREAD names every waiting game, so a hundred watched games do not hold a hundred
connections of the pool, and each waiter gets its own game's entries after its own seq."""

from __future__ import annotations

import asyncio
import time

import redis.asyncio as aioredis

from services.eventlog import InMemoryEventStore
from services.eventlog.redis_store import RedisEventStore
from services.readside.reader import ReadSide
from services.readside.tail import Tails
from services.redisinfra.redis_client import connect

GAMES = [f"t{i}" for i in range(120)]


async def test_a_hundred_waiting_games_share_one_read(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis
) -> None:
    """120 games waited on at once through a client of 10 connections: the waits take a read
    every 100 ms for all of them, not one each, other commands get a connection at once, and
    each waiter wakes with its game's entries after its own seq."""
    client = connect(redis_url, max_connections=10)
    store = RedisEventStore(client, redis_namespace)
    try:
        assert store.tails_together
        for g in GAMES:
            await store.append(g, 0, [b"first"])
        tails = Tails(store, block_ms=100)
        waits = [asyncio.create_task(tails.wait(g, 1, 5_000)) for g in GAMES]
        again = asyncio.create_task(tails.wait("t7", 0, 5_000))  # from further back
        await asyncio.sleep(0.3)  # every waiter in the shared read
        assert again.done() and [seq for seq, _, _ in again.result()] == [1]  # at once
        assert tails.reads <= 10  # one read every 100 ms names all 120 games, not one each
        t0 = time.perf_counter()
        await client.ping()  # the pool is not held by the waits
        assert time.perf_counter() - t0 < 1.0
        for k, g in enumerate(GAMES):
            await store.append(g, 1, [b"e%d" % k])
        got = await asyncio.gather(*waits)
        for k, rows in enumerate(got):
            assert [(seq, data) for seq, data, _ in rows] == [(2, b"e%d" % k)]
            assert rows[0][2] is not None  # with its append time
        assert await tails.wait("t0", 2, 150) == []  # nothing new: none, after its own wait
    finally:
        await client.aclose()


async def test_the_web_servers_read_side_waits_together_on_redis_only(
    redis_url: str, redis_namespace: str
) -> None:
    client = connect(redis_url)
    try:
        assert ReadSide(RedisEventStore(client, redis_namespace)).tails is not None
        assert ReadSide(InMemoryEventStore()).tails is None  # (it waits on its own: no pool)
    finally:
        await client.aclose()
