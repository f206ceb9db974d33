"""Asynchronous replication and `--wait-replicas`: answers acknowledged while a master's
replica does not have them are lost when that master fails over; with WAIT in the append's
round trip such an append is not acknowledged (NotReplicated, which callers retry) and no
acknowledged append is lost.

The replica is cut off the way a network partition would: frozen (SIGSTOP) and its
replication link closed on the master (CLIENT KILL TYPE slave), so what the master writes
after that reaches no replica; then the master is killed (-9) and the replica, thawed, is
promoted."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import redis

from services.contracts.streams import game_key
from services.eventlog.redis_store import RedisEventStore
from services.redisinfra.batching import NotReplicated
from services.redisinfra.cluster_server import LocalCluster
from services.redisinfra.redis_client import connect

GAMES = 8
ROUNDS = 3


def _replica_of(port: int) -> int:
    with redis.Redis(port=port) as c:
        info: Any = c.info("replication")
    return int(info["slave0"]["port"])


async def _acknowledged_then_lost(cluster: LocalCluster, wait: int) -> tuple[int, int, int]:
    """(appends acknowledged, of which lost in the failover, appends refused as unreplicated)."""
    client: Any = connect(cluster.url)
    await client.initialize()  # the slot table, to pick games on one master
    store = RedisEventStore(client, f"w{wait}", wait_replicas=wait, wait_timeout_ms=200)
    url_port = int(cluster.url.rsplit(":", 1)[1].split("/")[0])
    victim = next(p for p in cluster.master_ports() if p != url_port)
    games = [
        g
        for g in (f"g{i}" for i in range(400))
        if client.get_node_from_key(game_key(f"w{wait}", g, "log")).port == victim  # type: ignore[attr-defined]
    ][:GAMES]
    assert len(games) == GAMES
    acked = dict.fromkeys(games, 0)
    refused = 0

    async def round_() -> None:
        nonlocal refused
        for g, res in zip(
            games,
            await asyncio.gather(
                *(store.append(g, acked[g], [b"x"]) for g in games), return_exceptions=True
            ),
            strict=True,
        ):
            if isinstance(res, NotReplicated):
                refused += 1
                acked[g] += 1  # written all the same: the next append expects it
                continue
            assert isinstance(res, int), res
            acked[g] = res

    try:
        for _ in range(ROUNDS):  # the replica is there: acknowledged and replicated
            await round_()
        replica = _replica_of(victim)
        os.kill(cluster.processes[replica].pid, signal.SIGSTOP)
        try:
            with redis.Redis(port=victim) as c:
                c.execute_command("CLIENT", "KILL", "TYPE", "slave")
            before_refused = refused
            written = dict(acked)
            for _ in range(ROUNDS):  # cut off: no replica gets these
                await round_()
            cluster.kill(victim)
        finally:
            os.kill(cluster.processes[replica].pid, signal.SIGCONT)
        await asyncio.to_thread(cluster.wait_ok, 30.0, False)  # the replica took over
        heads = {g: await _head(store, g) for g in games}
    finally:
        await client.aclose()
    refused_now = refused - before_refused
    # acknowledged = every append that returned normally
    total_acked = sum(written.values()) + (GAMES * ROUNDS - refused_now)
    lost = sum(max(0, acked[g] - heads[g]) for g in games) - refused_now
    return total_acked, lost, refused_now


async def _head(store: RedisEventStore, game: str) -> int:
    for _ in range(50):
        try:
            return await store.head(game)
        except redis.RedisError:
            await asyncio.sleep(0.1)
    return await store.head(game)


async def test_without_wait_a_failover_loses_what_the_replica_lacked(
    own_cluster: LocalCluster,
) -> None:
    acked, lost, refused = await _acknowledged_then_lost(own_cluster, wait=0)
    assert refused == 0
    assert acked == 2 * ROUNDS * GAMES
    assert lost == ROUNDS * GAMES  # every answer acknowledged while cut off is gone


async def test_with_wait_no_acknowledged_append_is_lost(own_cluster: LocalCluster) -> None:
    acked, lost, refused = await _acknowledged_then_lost(own_cluster, wait=1)
    assert refused == ROUNDS * GAMES  # not acknowledged: the caller retries them
    assert acked == ROUNDS * GAMES
    assert lost == 0
