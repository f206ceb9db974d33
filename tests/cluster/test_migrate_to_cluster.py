"""`arena migrate --to`: a platform's namespace on one Redis copied into a real 3-master
cluster: a game's log reads and verifies the same, a consumer group keeps its pending entry
and its place in the stream, ratings and TTLs come along; a second copy refuses to overwrite,
and an old-layout source is sent to `arena migrate` first."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from services.cli import main as arena
from services.contracts.streams import DECISIONS, game_stream_key
from services.eventlog import RedisEventStore
from services.redisinfra.cluster_server import LocalCluster
from services.redisinfra.migrate import OldLayout, check_layout, copy_namespace
from services.redisinfra.redis_client import connect
from services.redisinfra.streams import GroupConsumer, publish
from services.verify import default_engine, record_game, verify_records


async def test_a_namespace_moves_onto_a_cluster_with_its_groups(
    redis_client: aioredis.Redis, redis_url: str, redis_namespace: str, redis_cluster: LocalCluster
) -> None:
    ns = redis_namespace
    await check_layout(redis_client, ns)  # what a service does first: the partitions record
    store = RedisEventStore(redis_client, ns)
    await record_game(store, "m1", default_engine(), "standard", 5, 3)
    records = [d for _, d in await store.read("m1")]
    stream = game_stream_key(ns, DECISIONS.name, "m1")
    held = GroupConsumer(redis_client, stream, "bots", "b0")
    await held.start()
    for n in range(3):
        await publish(redis_client, stream, {"n": str(n)})
    [first] = await held.read_new(1, 10)  # read, not acked: pending with b0
    await redis_client.hset(f"{ns}:{{rt}}:r:standard-5", "alice", b"rating")
    await redis_client.set(f"{ns}:{{mm}}:t:x", b"ticket", px=600_000)

    target = connect(redis_cluster.url)
    try:
        copied = await copy_namespace(redis_client, target, ns)
        assert copied.keys >= 5 and copied.partitions > 0
        on_cluster = RedisEventStore(target, ns)
        assert [d for _, d in await on_cluster.read("m1")] == records
        assert verify_records(records, default_engine(), game_id="m1").ok
        pending: dict[str, int] = await target.xpending(stream, "bots")  # type: ignore[assignment]
        assert pending["pending"] == 1
        claimed = GroupConsumer(target, stream, "bots", "b0")
        [again] = await claimed.read_own_pending(10)  # the same message, still owed by b0
        assert again.id == first.id
        rest = await claimed.read_new(10, 10)  # and the group's place: the two unread ones
        assert [m.fields[b"n"] for m in rest] == [b"1", b"2"]
        assert await target.hget(f"{ns}:{{rt}}:r:standard-5", "alice") == b"rating"
        assert 0 < await target.pttl(f"{ns}:{{mm}}:t:x") <= 600_000
        with pytest.raises(OldLayout, match="already holds"):
            await copy_namespace(redis_client, target, ns)
        assert await check_layout(target, ns) == copied.partitions  # services start on it
    finally:
        for key in [k async for k in target.scan_iter(match=f"{ns}:*")]:
            await target.delete(key)
        await target.aclose()
    assert [d for _, d in await store.read("m1")] == records  # the source is left as it was


async def test_an_old_layout_or_an_empty_source_is_refused(
    redis_client: aioredis.Redis,
    redis_url: str,
    redis_namespace: str,
    redis_cluster: LocalCluster,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ns = redis_namespace
    await redis_client.xadd(f"{ns}:matches", {"m": b"old"})  # the shared stream of old
    target = connect(redis_cluster.url)
    try:
        with pytest.raises(OldLayout, match="arena migrate"):
            await copy_namespace(redis_client, target, ns)
    finally:
        await target.aclose()
    code = await asyncio.to_thread(
        arena,
        [
            "migrate",
            "--redis-url",
            redis_url,
            "--namespace",
            f"{ns}-none",
            "--to",
            redis_cluster.url,
        ],
    )
    assert code == 2 and "no namespace" in capsys.readouterr().err
