"""Matchmaking benchmark (report only, JSON out): `arena bench matchmaking`.

- `matched_per_s`: 1,000 queued tickets over five modes with spread ratings; one matchmaker
  ticks until nothing more forms; tickets placed in published tables per second of ticking.
- `notify_ms`: Enqueue -> MATCHED update on WatchTicket over real gRPC, one server with its
  ticker (`tick_ms`), clients arriving every 2 ms on `standard-4`; p50 / p99.

Both in ``--repeat`` interleaved rounds, with CPU per ticket (the matchmaker's process and the
Redis server's, from INFO cpu), the spreads and the load average (services/bench/kit.py).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
import uuid
from typing import Any

import redis.asyncio as aioredis

from ..cliargs import bench_options
from ..matchmaking.clock import ManualClock, SystemClock
from ..matchmaking.core import Matchmaker
from ..matchmaking.grpc_server import MatchmakerServicer, Notifier, make_server
from ..matchmaking.modes import Policy, build_modes
from ..matchmaking.rating_store import RatingStore
from ..proto_gen.arena.v1 import matchmaker_pb2 as pb
from ..proto_gen.arena.v1 import matchmaker_pb2_grpc
from ..redisinfra.redis_client import connect
from ..redisinfra.server import redis_or_throwaway
from ..rpc_guard import signed_channel
from . import kit

MODES = ("standard-4", "standard-5", "standard-6", "standard-8", "honglou-10")


async def throughput(client: aioredis.Redis, tickets: int = 1000) -> dict[str, Any]:
    """Tickets matched per second with `tickets` queued."""
    ns = f"bench-{uuid.uuid4().hex[:8]}"
    clock = ManualClock(0)
    mm = Matchmaker(
        client,
        build_modes(default=Policy(bot_after_ms=0)),
        b"bench-secret-" + b"x" * 20,
        clock,
        namespace=ns,
        ticket_ttl_ms=3_600_000,
    )
    rng = random.Random(1)
    for i in range(tickets):
        t = await mm.enqueue(f"p{i}", MODES[i % len(MODES)])
        await client.zadd(mm._q(t.mode), {t.ticket: rng.gauss(25, 4)})
    clock.advance(10_000)  # ratings windows of 8 mu
    redis0, cpu0 = await kit.redis_cpu_seconds(client), time.process_time()
    start, matched, ticks = time.perf_counter(), 0, 0
    while True:
        formed = await mm.tick()
        ticks += 1
        if not formed:
            break
        matched += sum(len(f.tickets) for f in formed)
    elapsed = time.perf_counter() - start
    cpu, redis_cpu = time.process_time() - cpu0, await kit.redis_cpu_seconds(client) - redis0
    await _drop(client, ns)
    return {
        "queued": tickets,
        "matched": matched,
        "ticks": ticks,
        "seconds": round(elapsed, 3),
        "matched_per_s": round(matched / elapsed, 1),
        "cpu_us_per_ticket": {
            "matchmaker": round(cpu * 1e6 / max(matched, 1), 1),
            "redis": round(redis_cpu * 1e6 / max(matched, 1), 1),
        },
    }


async def latency(
    client: aioredis.Redis, tickets: int = 400, tick_ms: int = 20, gap_ms: float = 2.0
) -> dict[str, Any]:
    """Enqueue -> MATCHED notification latency over gRPC (server, ticker and clients share one
    event loop, so at high arrival rates this measures that loop's queueing as well)."""
    ns = f"bench-{uuid.uuid4().hex[:8]}"
    ratings = RatingStore(client, ns)
    mm = Matchmaker(
        client,
        build_modes(default=Policy(bot_after_ms=0)),
        b"bench",
        SystemClock(),
        ratings=ratings,
        namespace=ns,
    )
    notifier = Notifier(client, mm.channel)
    stop = asyncio.Event()
    server, port, _ = make_server(MatchmakerServicer(mm, notifier, ratings, 1.0))
    await server.start()

    async def ticker() -> None:
        while not stop.is_set():
            await mm.tick()
            await asyncio.sleep(tick_ms / 1000)

    tasks = [asyncio.create_task(notifier.run(stop)), asyncio.create_task(ticker())]
    cpu0 = time.process_time()
    out: list[float] = []
    async with signed_channel(f"127.0.0.1:{port}", mm.secret) as ch:  # the matchmaker's auth
        stub = matchmaker_pb2_grpc.MatchmakerStub(ch)  # type: ignore[no-untyped-call]
        warm = await stub.Enqueue(pb.EnqueueRequest(player="warm", mode="standard-10"))
        await stub.Cancel(pb.CancelRequest(ticket_id=warm.ticket_id, player="warm"))

        async def one(i: int) -> None:
            await asyncio.sleep(i * gap_ms / 1000)
            t0 = time.perf_counter()
            t = await stub.Enqueue(pb.EnqueueRequest(player=f"l{i}", mode="standard-4"))
            async for u in stub.WatchTicket(
                pb.WatchTicketRequest(ticket_id=t.ticket_id, player=t.player)
            ):
                if u.state == pb.TicketUpdate.MATCHED:
                    out.append((time.perf_counter() - t0) * 1000)

        await asyncio.gather(*(one(i) for i in range(tickets - tickets % 4)))
    cpu = time.process_time() - cpu0
    stop.set()
    await asyncio.gather(*tasks)
    await server.stop(None)
    await _drop(client, ns)
    q = statistics.quantiles(out, n=100)
    return {
        "tickets": len(out),
        "tick_ms": tick_ms,
        "arrival_gap_ms": gap_ms,
        "p50_ms": round(q[49], 1),
        "p99_ms": round(q[98], 1),
        # server, ticker and clients share this process: an upper bound for the server's part
        "cpu_us_per_ticket_all_in_process": round(cpu * 1e6 / max(len(out), 1), 1),
    }


async def _drop(client: aioredis.Redis, ns: str) -> None:
    keys = [k async for k in client.scan_iter(match=f"{ns}*", count=1000)]
    if keys:
        await client.delete(*keys)


async def _bench(url: str, repeat: int) -> dict[str, Any]:
    """``repeat`` rounds of (throughput, notify at 2 ms gaps, notify at 10 ms gaps)."""
    client = connect(url)
    tp: list[dict[str, Any]] = []
    fast: list[dict[str, Any]] = []
    slow: list[dict[str, Any]] = []
    try:
        for _ in range(repeat):
            tp.append(await throughput(client))
            fast.append(await latency(client, 400, gap_ms=2.0))
            slow.append(await latency(client, 200, gap_ms=10.0))
    finally:
        await client.aclose()
    return {
        "repeats": repeat,
        "throughput": {
            "matched_per_s": kit.spread([r["matched_per_s"] for r in tp], 1),
            "cpu_us_per_ticket": {
                k: kit.spread([r["cpu_us_per_ticket"][k] for r in tp], 1)
                for k in ("matchmaker", "redis")
            },
            "runs": tp,
        },
        "notify": [
            {
                "arrival_gap_ms": rs[0]["arrival_gap_ms"],
                "p50_ms": kit.spread([r["p50_ms"] for r in rs], 1),
                "p99_ms": kit.spread([r["p99_ms"] for r in rs], 1),
                "runs": rs,
            }
            for rs in (fast, slow)
        ],
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench matchmaking` options."""
    bench_options(p)
    p.add_argument("--repeat", type=int, default=3, help="rounds (throughput, notify, notify)")


def main(args: argparse.Namespace) -> int:
    """`arena bench matchmaking`: run both benchmarks and print JSON."""
    env = kit.Envelope("matchmaking")

    def run() -> object:
        with redis_or_throwaway(args.redis_url) as url:
            return env.wrap(asyncio.run(_bench(url, args.repeat)))

    return kit.report("matchmaking", run, "--repeat must be at least 1" if args.repeat < 1 else "")
