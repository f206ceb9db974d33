"""Snapshots carried in the append script on a real Redis Cluster: a game's snapshot hash
shares its log's slot (the partition's tag), so the appends of one partition and their
snapshots go in one script call per partition, never a call of their own."""

from __future__ import annotations

from redis.crc import key_slot

from services.eventlog.redis_store import RedisEventStore
from services.eventlog.store import Snapshot
from services.redisinfra.cluster_server import LocalCluster
from services.redisinfra.redis_client import connect, is_cluster


async def test_snapshots_ride_their_partitions_call(redis_cluster: LocalCluster) -> None:
    client = connect(redis_cluster.url)
    assert is_cluster(client)
    store = RedisEventStore(client, "snap1")
    games = [f"g{i}" for i in range(48)]
    try:
        for g in games:
            assert key_slot(store.snapshot_key(g).encode()) == key_slot(store.log_key(g).encode())
        tags = {store.layout.tag(g) for g in games}
        calls = store.appender.calls
        got = await store.append_many(
            [(g, 0, [b"a", b"b"], []) for g in games],
            snapshots=[Snapshot(2 if k % 3 else 3, b"h", g.encode()) for k, g in enumerate(games)],
        )
        assert got == [2] * 48
        assert store.appender.calls - calls == len(tags)  # one call a partition
        for k, g in enumerate(games):
            snap = await store.load_snapshot(g)
            if k % 3:
                assert snap == Snapshot(2, b"h", g.encode())
            else:  # version 3, beyond the head 2: not stored
                assert snap is None
    finally:
        await client.aclose()
