"""`arena bench eventlog`: append and rebuild throughput against raw redis-py and msgspec.

Append: the same sealed entry bytes are written (a) through RedisEventStore.append in batches of
1 and 20, one awaited call per batch, and (b) with a redis-py pipeline of plain XADDs per batch
(no version check, no atomicity): the ceiling the adapter is measured against.

Each comparison is interleaved round by round (adapter, raw, adapter, raw, ...) and reports
wall rates and CPU per event (this process; for appends also the Redis server's, from INFO cpu)
with their median, min and max, and the load average (services/bench/kit.py).

Appends of many games at once: GAMES_AT_ONCE games append 5 entries each concurrently, as an
engine answering many games does, their appends sharing script calls (appends.py) against the
same with every append a call of its own (as before #20); Redis CPU per append of each.

Rebuild: GameLog.load (XRANGE, entry decode, hash-chain check) plus decoding every event and
folding it into a view, against decoding the same bytes in memory with the same decoders. The
fold is a per-type counter: `services.rules.api` exposes no view fold yet; when it offers
`new_view(viewer)` and `apply_view(view, event)` this module uses them instead.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import msgspec
import redis.asyncio as aioredis

from ..cliargs import bench_options
from ..eventlog.entry import EVENT, decode_entry, encode_entry, seal
from ..eventlog.gamelog import GameLog
from ..eventlog.memory import InMemoryEventStore
from ..eventlog.redis_store import RedisEventStore
from ..redisinfra.redis_client import connect
from ..redisinfra.server import find_server_binary, redis_or_throwaway
from ..verify import Engine, default_engine
from . import kit
from .kit import Sample


async def _corpus(engine: Engine | None, size: int) -> list[bytes]:
    """`size` stored entries: real games when the engine is there, else synthetic events."""
    if engine is None:
        items = [
            (EVENT, msgspec.msgpack.encode({"type": "x", "seat": i % 5, "n": i}))
            for i in range(size)
        ]
        return [encode_entry(e) for e in seal(bytes(32), 1, items)]
    from ..verify import record_game

    store, seed = InMemoryEventStore(), 0
    out: list[bytes] = []
    while len(out) < size:
        await record_game(store, f"b{seed}", engine, "standard", 5, seed)
        out += [d for _, d in await store.read(f"b{seed}")]
        seed += 1
    # Re-chain so the corpus is one valid log of exactly `size` entries.
    entries = [decode_entry(d) for d in out[:size]]
    return [encode_entry(e) for e in seal(bytes(32), 1, [(e.kind, e.payload) for e in entries])]


async def _append_adapter(
    store: RedisEventStore, game: str, records: list[bytes], batch: int
) -> int:
    v = 0
    for i in range(0, len(records), batch):
        v = await store.append(game, v, records[i : i + batch])
    return len(records)


async def _append_raw(client: aioredis.Redis, key: str, records: list[bytes], batch: int) -> int:
    for i in range(0, len(records), batch):
        async with client.pipeline(transaction=False) as pipe:
            for r in records[i : i + batch]:
                pipe.xadd(key, {"e": r})
            await pipe.execute()
    return len(records)


GAMES_AT_ONCE = 20


async def _append_games(store: RedisEventStore, prefix: str, records: list[bytes]) -> int:
    """GAMES_AT_ONCE games appending 5 entries at a time, concurrently (an engine answering many
    games): their appends of one loop iteration share script calls (appends.py)."""
    games = [f"{prefix}-{g}" for g in range(GAMES_AT_ONCE)]
    per_game = len(records) // GAMES_AT_ONCE
    for i in range(0, per_game - per_game % 5, 5):
        await asyncio.gather(
            *(
                store.append(g, i, records[k * per_game + i : k * per_game + i + 5])
                for k, g in enumerate(games)
            )
        )
    for g in games:
        await store.delete(g)
    return GAMES_AT_ONCE * (per_game - per_game % 5) // 5


async def _timed(
    client: aioredis.Redis, run: Callable[[], Awaitable[int]]
) -> tuple[Sample, Sample]:
    """(this process, the Redis server): the same units and wall time, each one's CPU."""
    r0, c0, t0 = (
        await kit.redis_cpu_seconds(client),
        kit.cpu_seconds(),
        time.perf_counter(),
    )
    units = await run()
    wall, cpu = time.perf_counter() - t0, kit.cpu_seconds() - c0
    return Sample(units, wall, cpu), Sample(units, wall, await kit.redis_cpu_seconds(client) - r0)


def _folder(
    engine: Engine | None,
) -> tuple[Callable[[bytes], Any], Callable[[Any, Any], Any], Any, str]:
    decode: Callable[[bytes], Any] = engine.decode_event if engine else msgspec.msgpack.decode
    new_view = getattr(engine, "new_view", None)
    apply_view = getattr(engine, "apply_view", None)
    if new_view and apply_view:
        return decode, apply_view, new_view(getattr(engine, "GOD", -2)), "engine view fold"

    def count(view: Any, event: Any) -> Any:
        view[type(event).__name__ if engine else "event"] += 1
        return view

    return decode, count, collections.Counter(), "per-type counter (no engine view fold yet)"


async def _bench(url: str, size: int, rounds: int) -> dict[str, Any]:
    try:
        engine: Engine | None = default_engine()
    except ImportError:
        engine = None
    records = await _corpus(engine, size)
    client = connect(url)
    store = RedisEventStore(client, namespace="bench")
    out: dict[str, Any] = {
        "entries": len(records),
        "entry_bytes_avg": round(sum(map(len, records)) / len(records), 1),
        "corpus": "real standard games" if engine else "synthetic events",
    }
    try:
        for batch in (1, 20):
            me: dict[str, list[Sample]] = {"adapter": [], "raw": []}
            redis: dict[str, list[Sample]] = {"adapter": [], "raw": []}
            for r in range(rounds):  # interleaved: adapter, raw, adapter, raw, ...
                game, raw_key = f"append-{batch}-{r}", f"bench:raw-{batch}-{r}"
                await store.delete(game)
                await client.delete(raw_key)
                for name, run in (
                    ("adapter", partial(_append_adapter, store, game, records, batch)),
                    ("raw", partial(_append_raw, client, raw_key, records, batch)),
                ):
                    here, there = await _timed(client, run)
                    me[name].append(here)
                    redis[name].append(there)
                await client.delete(raw_key, store.log_key(game))
            out[f"append_batch{batch}"] = {
                "adapter": kit.summary(me["adapter"], "events")
                | {"redis_cpu_us_per_event": _cpu_us(redis["adapter"])},
                "raw_xadd_pipeline": kit.summary(me["raw"], "events")
                | {"redis_cpu_us_per_event": _cpu_us(redis["raw"])},
                "ratio_adapter_vs_raw": kit.ratio(me["adapter"], me["raw"]),
            }
        alone = RedisEventStore(client, namespace="bench")
        alone.appender.per_call = 1  # every append a script call of its own (before #20)
        calls: dict[str, list[Sample]] = {"shared": [], "alone": []}
        redis_calls: dict[str, list[Sample]] = {"shared": [], "alone": []}
        for r in range(rounds):  # interleaved
            for name, s in (("shared", store), ("alone", alone)):
                here, there = await _timed(
                    client, partial(_append_games, s, f"g{name}{r}", records)
                )
                calls[name].append(here)
                redis_calls[name].append(there)
        out["append_games_at_once"] = {
            "games": GAMES_AT_ONCE,
            "entries_per_append": 5,
            "shared_calls": kit.summary(calls["shared"], "appends")
            | {"redis_cpu_us_per_append": _cpu_us(redis_calls["shared"])},
            "one_call_each": kit.summary(calls["alone"], "appends")
            | {"redis_cpu_us_per_append": _cpu_us(redis_calls["alone"])},
            "redis_cpu_ratio_shared_vs_each": kit.spread(
                [
                    a.cpu_us_per_unit / max(b.cpu_us_per_unit, 1e-9)
                    for a, b in zip(redis_calls["shared"], redis_calls["alone"], strict=True)
                ]
            ),
        }
        await store.append("rebuild", 0, records)
        decode, apply, view0, fold_name = _folder(engine)
        entry_decoder = msgspec.msgpack.Decoder(type=list[Any])  # raw: untyped, no checks

        async def rebuild() -> int:
            loaded = await GameLog.load(store, "rebuild")
            view = view0.copy() if hasattr(view0, "copy") else view0
            for e in loaded.tail:
                if e.kind == EVENT:
                    view = apply(view, decode(e.payload))
            return len(records)

        async def raw_decode() -> int:
            for data in records:
                raw = entry_decoder.decode(data)
                if raw[1] == EVENT:
                    decode(raw[2])
            return len(records)

        rb: dict[str, list[Sample]] = {"rebuild": [], "raw": []}
        for _ in range(rounds):
            rb["rebuild"].append((await _timed(client, rebuild))[0])
            rb["raw"].append((await _timed(client, raw_decode))[0])
        out["rebuild"] = {
            "fold": fold_name,
            "rebuild": kit.summary(rb["rebuild"], "events"),
            "raw_decode": kit.summary(rb["raw"], "events"),
            "ratio_rebuild_vs_raw": kit.ratio(rb["rebuild"], rb["raw"]),
        }
        await store.delete("rebuild")
    finally:
        await client.aclose()
    return out


def _cpu_us(samples: list[Sample]) -> dict[str, float]:
    return kit.spread([s.cpu_us_per_unit for s in samples], 2)


def bench_eventlog(
    redis_url: str | None = None, size: int = 4000, rounds: int = 3
) -> dict[str, Any]:
    """Run the event-log benchmark; starts a throw-away redis-server if `redis_url` is None."""
    env = kit.Envelope("eventlog")
    with redis_or_throwaway(redis_url) as url:
        where = redis_url or f"throw-away {find_server_binary()}"
        return env.wrap(asyncio.run(_bench(url, size, rounds)) | {"redis": where})


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench eventlog` options."""
    bench_options(p)
    p.add_argument("--size", type=int, default=4000, help="events per run")
    p.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds (median, min and max reported)"
    )
    p.add_argument(
        "--cluster",
        action="store_true",
        help="instead: the engine's append on one redis-server against a local Redis Cluster "
        "(services/bench/cluster.py): appends/s and Redis CPU per append per node",
    )
    p.add_argument("--masters", type=int, default=3, help="with --cluster: the cluster's masters")
    p.add_argument("--games", type=int, default=200, help="with --cluster: games at once")


def main(args: argparse.Namespace) -> int:
    """`arena bench eventlog`: print the JSON report."""

    def run() -> object:
        if args.cluster:
            from .cluster import bench_cluster

            return bench_cluster(args.masters, args.games, rounds=args.rounds)
        return bench_eventlog(args.redis_url, args.size, args.rounds)

    return kit.report("eventlog", run)
