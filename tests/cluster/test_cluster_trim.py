"""The shared streams trimmed on a real 3-master cluster (services/redisinfra/trim.py): every
partition's stream, on whichever master holds its slot, loses what every group acked, and the
keeper's metrics (arena_stream_*) report each stream's length, pending and lag. The keeper's
round once sent TIME inside a pipeline, which redis-py's cluster client refuses: every round
failed ("Calling pipelined function time is blocked"), and after 80 games the shared streams
held every entry. (tests/cluster/test_failover_tournament.py checks the streams are emptied
after a tournament through the platform on a cluster.)"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from services.contracts.streams import DECISIONS, stream_keys
from services.redisinfra.cluster_server import LocalCluster
from services.redisinfra.redis_client import connect, is_cluster
from services.redisinfra.streams import ensure_group, publish
from services.redisinfra.trim import StreamKeeper, trim_all

NS = "trim"


async def test_the_keeper_trims_every_partition_on_a_cluster(
    redis_cluster: LocalCluster,
) -> None:
    client = connect(redis_cluster.url)
    assert is_cluster(client)
    keys = stream_keys(NS, DECISIONS.name)
    try:
        for key in keys:  # every partition: 6 entries, the group reads all 6 and acks 4
            await ensure_group(client, key, "bots")
            for i in range(6):
                await publish(client, key, {b"m": b"x" * 100, b"i": b"%d" % i})
            reply: Any = await client.xreadgroup("bots", "c1", {key: ">"}, count=6)
            ids = [i for i, _ in reply[0][1]]
            await client.xack(key, "bots", *ids[:4])
        registry = CollectorRegistry()
        keeper = StreamKeeper(client, NS, registry, streams=(DECISIONS,))
        state, removed = (await keeper.once())[DECISIONS.name]
        assert state.length == 6 * len(keys) and not state.missing
        [group] = state.groups
        assert (group.pending, group.lag) == (2 * len(keys), 0)
        assert 0 <= removed <= 4 * len(keys)  # approximate: whole stream nodes
        sample = registry.get_sample_value
        labels = {"stream": "decisions", "group": "bots"}
        assert sample("arena_stream_length", {"stream": "decisions"}) == 6 * len(keys) - removed
        assert sample("arena_stream_group_pending", labels) == 2 * len(keys)
        assert sample("arena_stream_group_lag", labels) == 0
        assert sample("arena_stream_group_oldest_unacked_seconds", labels) is not None
        done = await trim_all(client, [(k, ("bots",), 0) for k in keys], approximate=False)
        assert sum(gone for _, gone in done) == 4 * len(keys) - removed
        assert [await client.xlen(k) for k in keys] == [2] * len(keys)  # the 2 unacked each
    finally:
        for key in keys:
            await client.delete(key)
        await client.aclose()
