"""`arena bench eventlog --cluster`: the engine's append on one Redis against a Redis Cluster.

The workload is what an engine worker does per answer: one script that appends the answer's
entries (3 here) to the game's log, moves the decision deadline and publishes the next bot
decision (`RedisSide.append_with`), for `games` games at once, `appends` answers each. It runs
on a throw-away redis-server and on a throw-away cluster of `masters` masters (one replica
each) with the same partitioned layout, interleaved round by round (single, cluster, single,
...), each round in a fresh namespace.

Reported per target: appends/s (wall), this process's CPU per append, and each Redis node's CPU
per append (INFO cpu: used_cpu_sys + used_cpu_user before and after, masters and replicas
apart). The busiest master saturates first, so one target's ceiling is 1e6 / (its busiest
master's CPU us per append) appends/s with a core per master; `share_of_single` is the busiest
master's CPU per append over the single server's: about 1/N when the partitions spread evenly.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from typing import Any

import redis

from ..contracts.streams import BotDecision
from ..engine.side import Effects, RedisSide
from ..eventlog.redis_store import RedisEventStore
from ..redisinfra.cluster_server import LocalCluster
from ..redisinfra.redis_client import connect
from ..redisinfra.server import RedisServer, find_server_binary
from . import kit

ENTRY = b"e" * 120  # about an event's size


def _cpu(port: int) -> float:
    with redis.Redis(port=port) as c:
        info: Any = c.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def _role(port: int) -> str:
    with redis.Redis(port=port) as c:
        info: Any = c.info("replication")
    return str(info["role"])


async def _workload(url: str, cluster: bool, games: int, appends: int) -> int:
    client = connect(url, cluster=cluster)
    ns = f"bench-{uuid.uuid4().hex[:8]}"
    store, side = RedisEventStore(client, ns), RedisSide(client, ns)

    async def play(game: str) -> None:
        version = 0
        for i in range(appends):
            message = BotDecision(
                game=game, decision=i + 1, seat=i % 5, player="bot:random", version=0, body=b"{}"
            )
            effects = Effects(clear=i or None, deadline=(i + 1, 2**40), messages=(message,))
            version = await side.append_with(store, game, version, [ENTRY] * 3, effects)

    try:
        await asyncio.gather(*(play(f"g{g}") for g in range(games)))
    finally:
        await client.aclose()
    return games * appends


def _offset(port: int) -> int:
    """A node's replication offset: what a master wrote, what a replica has processed (the
    master's own figure for its replica moves only with the replica's once-a-second ACK)."""
    with redis.Redis(port=port) as c:
        info: Any = c.info("replication")
    key = "master_repl_offset" if info["role"] == "master" else "slave_repl_offset"
    return int(info[key])


def _replica_of(port: int) -> int:
    with redis.Redis(port=port) as c:
        info: Any = c.info("replication")
    return int(info["slave0"]["port"])


class _LagSampler:
    """Samples every master's replication lag (bytes its replica has not acknowledged) while a
    workload runs: what a failover at that instant would lose."""

    def __init__(self, masters: list[int]) -> None:
        self.masters = masters
        self.lags: list[int] = []
        self.stop = threading.Event()
        self.replicas = {p: _replica_of(p) for p in masters}
        self.start = {p: _offset(p) for p in masters}
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        clients = {p: redis.Redis(port=p) for p in [*self.masters, *self.replicas.values()]}
        try:
            while not self.stop.is_set():
                for port in self.masters:
                    with contextlib.suppress(redis.RedisError, OSError, KeyError):
                        # the master first: the replica, read later, is never ahead of it
                        master: Any = clients[port].info("replication")
                        replica: Any = clients[self.replicas[port]].info("replication")
                        lag = int(master["master_repl_offset"]) - int(replica["slave_repl_offset"])
                        self.lags.append(max(0, lag))
                self.stop.wait(0.002)
        finally:
            for c in clients.values():
                c.close()

    def finish(self, appends: int) -> dict[str, Any]:
        self.stop.set()
        self.thread.join()
        written = sum(_offset(p) - self.start[p] for p in self.masters)
        per = written / max(appends, 1)  # replication bytes per append
        lags = sorted(self.lags) or [0]
        return {
            "replication_bytes_per_append": round(per, 1),
            "lag_samples": len(self.lags),
            "lag_appends_median": round(lags[len(lags) // 2] / max(per, 1), 2),
            "lag_appends_p99": round(lags[int(len(lags) * 0.99)] / max(per, 1), 2),
            "lag_appends_max": round(lags[-1] / max(per, 1), 2),
        }


def _run(url: str, ports: list[int], cluster: bool, games: int, appends: int) -> dict[str, Any]:
    roles = {p: _role(p) for p in ports}
    before = {p: _cpu(p) for p in ports}
    sampler = _LagSampler([p for p in ports if roles[p] == "master"]) if cluster else None
    sample = kit.timed(lambda: asyncio.run(_workload(url, cluster, games, appends)))
    lag = sampler.finish(sample.units) if sampler is not None else None
    used = {p: _cpu(p) - before[p] for p in ports}
    n = sample.units
    masters = sorted((used[p] * 1e6 / n for p in ports if roles[p] == "master"), reverse=True)
    replicas = [used[p] * 1e6 / n for p in ports if roles[p] != "master"]
    return {
        "appends_per_s": sample.rate,
        "client_cpu_us_per_append": sample.cpu_us_per_unit,
        "master_cpu_us_per_append": masters,  # busiest first
        "replica_cpu_us_per_append": replicas,
        "redis_cpu_us_per_append_total": sum(masters) + sum(replicas),
        **({"replication_lag": lag} if lag else {}),
    }


def bench_cluster(
    masters: int = 3, games: int = 200, appends: int = 40, rounds: int = 3
) -> dict[str, Any]:
    """Interleaved rounds on one throw-away redis-server and one throw-away cluster."""
    env = kit.Envelope("eventlog-cluster")
    binary = find_server_binary()
    if binary is None:
        raise RuntimeError("no redis-server >= 6.2 on PATH and none bundled")
    single: list[dict[str, Any]] = []
    multi: list[dict[str, Any]] = []
    with RedisServer(persist=False, binary=binary) as one, LocalCluster(masters) as cl:
        for _ in range(rounds):
            single.append(_run(one.url, [one.port], False, games, appends))
            multi.append(_run(cl.url, cl.ports, True, games, appends))

    def spread(rows: list[dict[str, Any]], key: str, pick: Any = None) -> dict[str, float]:
        return kit.spread([pick(r[key]) if pick else r[key] for r in rows], 2)

    busiest_single = [r["master_cpu_us_per_append"][0] for r in single]
    busiest_multi = [r["master_cpu_us_per_append"][0] for r in multi]
    share = [m / s for m, s in zip(busiest_multi, busiest_single, strict=True)]
    return env.wrap(
        {
            "workload": {
                "games": games,
                "appends_per_game": appends,
                "entries_per_append": 3,
                "outbox": "deadline + decision message",
                "rounds": rounds,
            },
            "single": {
                "appends_per_s": spread(single, "appends_per_s"),
                "redis_cpu_us_per_append": spread(
                    busiest_single and single, "master_cpu_us_per_append", lambda x: x[0]
                ),
                "client_cpu_us_per_append": spread(single, "client_cpu_us_per_append"),
                "ceiling_appends_per_s": round(1e6 / kit.spread(busiest_single)["median"]),
            },
            "cluster": {
                "masters": masters,
                "appends_per_s": spread(multi, "appends_per_s"),
                "busiest_master_cpu_us_per_append": spread(
                    multi, "master_cpu_us_per_append", lambda x: x[0]
                ),
                "masters_cpu_us_per_append_last_round": [
                    round(x, 2) for x in multi[-1]["master_cpu_us_per_append"]
                ],
                "replicas_cpu_us_per_append_last_round": [
                    round(x, 2) for x in multi[-1]["replica_cpu_us_per_append"]
                ],
                "client_cpu_us_per_append": spread(multi, "client_cpu_us_per_append"),
                # acknowledged appends a replica lacked at a sampled instant: what a failover
                # then would lose (without --wait-replicas)
                "replication_lag_by_round": [r["replication_lag"] for r in multi],
                "ceiling_appends_per_s": round(1e6 / kit.spread(busiest_multi)["median"]),
            },
            "busiest_master_share_of_single": kit.spread(share),
            "redis": str(binary),
        }
    )
