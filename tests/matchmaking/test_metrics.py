"""The matchmaker's /metrics: every metric is served, and each count moves where its event
happens — enqueue, cancel, expiry, a table formed (with bots or not), a finished game rated —
in-process on a manual clock, and in a real `arena matchmaker --metrics-port 0` process."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import time
from pathlib import Path

import redis.asyncio as aioredis
from process_helpers import arena, clean_env
from prometheus_client import CollectorRegistry
from scrape_helpers import Samples
from scrape_helpers import scrape as scrape_names

from services.eventlog import Seat
from services.eventlog.redis_store import RedisEventStore
from services.matchmaking.clock import ManualClock
from services.matchmaking.consumer import Ratings
from services.matchmaking.core import Matchmaker
from services.matchmaking.metrics import Metrics
from services.matchmaking.modes import Policy, build_modes
from services.matchmaking.rating_store import RatingStore
from services.observability import serve, stop_serving
from services.proto_gen.arena.v1 import matchmaker_pb2 as pb
from services.proto_gen.arena.v1 import matchmaker_pb2_grpc
from services.rpc_guard import signed_channel
from services.rules import api
from services.verify import record_game

SECRET = "mm-metrics-" + "x" * 32

NAMES = {
    "arena_matchmaker_tickets_enqueued",
    "arena_matchmaker_tickets_cancelled",
    "arena_matchmaker_tickets_expired",
    "arena_matchmaker_tickets_matched",
    "arena_matchmaker_tables_formed",
    "arena_matchmaker_bot_backfills",
    "arena_matchmaker_bot_seats",
    "arena_matchmaker_form_conflicts",
    "arena_matchmaker_wait_seconds",
    "arena_matchmaker_queue_depth",
    "arena_matchmaker_ratings_updates",
}


def scrape(port: int) -> Samples:
    """GET /metrics (every family in NAMES must be there)."""
    return scrape_names(port, NAMES)


def value(reg: CollectorRegistry, name: str, **labels: str) -> float:
    return reg.get_sample_value(name, labels) or 0.0


async def test_counts_move_where_things_happen(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(0)
    metrics = Metrics()
    mm = Matchmaker(
        redis_client,
        build_modes(default=Policy(bot_after_ms=20_000, min_humans=2)),
        b"mm-metrics",
        clock,
        namespace=redis_namespace,
        ticket_ttl_ms=30_000,
        rng=random.Random(1),
        metrics=metrics,
    )
    reg = metrics.registry
    server = serve(0, reg)
    try:
        for i in range(5):
            await mm.enqueue(f"p{i}", "standard-5")
        solo = await mm.enqueue("solo", "standard-6")
        await mm.enqueue("duo", "standard-6")
        quitter = await mm.enqueue("quitter", "standard-4")
        await mm.enqueue("ghost", "standard-8")
        assert value(reg, "arena_matchmaker_tickets_enqueued_total", mode="standard-5") == 5
        assert value(reg, "arena_matchmaker_tickets_enqueued_total", mode="standard-6") == 2
        assert await mm.cancel(quitter.ticket, "quitter")
        assert await mm.cancel(quitter.ticket, "quitter")  # again: a no-op, not counted again
        assert value(reg, "arena_matchmaker_tickets_cancelled_total", mode="standard-4") == 1

        (full,) = await mm.tick()  # five of standard-5: a full table, no bots
        assert full.mode == "standard-5"
        got = scrape(server.server_port)
        assert got[("arena_matchmaker_tables_formed_total", (("mode", "standard-5"),))] == 1
        assert got[("arena_matchmaker_tickets_matched_total", (("mode", "standard-5"),))] == 5
        assert got[("arena_matchmaker_queue_depth", (("mode", "standard-5"),))] == 0
        assert got[("arena_matchmaker_queue_depth", (("mode", "standard-6"),))] == 2
        assert got[("arena_matchmaker_queue_depth", (("mode", "standard-8"),))] == 1
        assert got[("arena_matchmaker_queue_depth", (("mode", "standard-4"),))] == 0
        assert ("arena_matchmaker_bot_backfills_total", (("mode", "standard-5"),)) not in got

        clock.advance(20_000)  # solo waited 20 s with a second human in reach: bots fill 4 seats
        (backfilled,) = await mm.tick()
        assert set(backfilled.tickets) >= {solo.ticket}
        assert value(reg, "arena_matchmaker_bot_backfills_total", mode="standard-6") == 1
        assert value(reg, "arena_matchmaker_bot_seats_total", mode="standard-6") == 4
        assert value(reg, "arena_matchmaker_tables_formed_total", mode="standard-6") == 1
        assert value(reg, "arena_matchmaker_queue_depth", mode="standard-8") == 1  # alone
        assert value(reg, "arena_matchmaker_wait_seconds_count") == 7
        assert value(reg, "arena_matchmaker_wait_seconds_sum") == 2 * 20.0

        clock.advance(11_000)  # nobody watched ghost's ticket for 31 s > its 30 s to live
        assert await mm.tick() == []
        got = scrape(server.server_port)
        assert got[("arena_matchmaker_tickets_expired_total", (("mode", "standard-8"),))] == 1
        assert got[("arena_matchmaker_queue_depth", (("mode", "standard-8"),))] == 0
        assert got[("arena_matchmaker_form_conflicts_total", ())] == 0
    finally:
        await asyncio.to_thread(stop_serving, server)


async def test_a_rated_game_counts_once(
    redis_client: aioredis.Redis, redis_namespace: str, tmp_path: Path
) -> None:
    store = RedisEventStore(redis_client, redis_namespace)
    seats = [Seat(f"u{i}", i == 4) for i in range(5)]
    await record_game(store, "rated-1", api, "standard", 5, 11, seats=seats)
    metrics = Metrics()
    rater = Ratings(store, RatingStore(redis_client, redis_namespace), tmp_path, metrics)
    assert await rater.rate("rated-1") is True
    assert await rater.rate("rated-1") is False  # a redelivered announcement
    reg = metrics.registry
    assert value(reg, "arena_matchmaker_ratings_updates_total", result="rated") == 1
    assert value(reg, "arena_matchmaker_ratings_updates_total", result="duplicate") == 1


def _metrics_until(
    port: int, key: tuple[str, tuple[tuple[str, str], ...]], want: float, timeout: float = 20
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    deadline = time.monotonic() + timeout
    while True:
        got = scrape(port)
        if got.get(key) == want or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def _matchmaker(redis_url: str, ns: str, *args: str) -> subprocess.Popen[str]:
    """`arena matchmaker` on a free gRPC port; its first output line says where it listens."""
    return arena(
        "matchmaker",
        *("--redis-url", redis_url, "--namespace", ns, "--port", "0", *args),
        env={**clean_env(), "ARENA_SECRET": SECRET},
        stdout=subprocess.PIPE,
    )


async def test_arena_matchmaker_serves_metrics(redis_url: str, redis_namespace: str) -> None:
    proc = _matchmaker(
        redis_url, redis_namespace, "--metrics-port", "0", "--tick-ms", "20", "--bot-after-ms", "0"
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        port, grpc_port = ready["metrics_port"], ready["port"]
        assert port > 0 and port != grpc_port
        async with signed_channel(f"127.0.0.1:{grpc_port}", SECRET.encode()) as ch:
            stub = matchmaker_pb2_grpc.MatchmakerStub(ch)
            for i in range(4):
                await stub.Enqueue(pb.EnqueueRequest(player=f"w{i}", mode="standard-4"))
            t = await stub.Enqueue(pb.EnqueueRequest(player="x", mode="standard-5"))
            await stub.Cancel(pb.CancelRequest(ticket_id=t.ticket_id, player="x"))
        formed = ("arena_matchmaker_tables_formed_total", (("mode", "standard-4"),))
        got = await asyncio.to_thread(_metrics_until, port, formed, 1.0)
        assert got[formed] == 1
        assert got[("arena_matchmaker_tickets_enqueued_total", (("mode", "standard-4"),))] == 4
        assert got[("arena_matchmaker_tickets_cancelled_total", (("mode", "standard-5"),))] == 1
        assert got[("arena_matchmaker_queue_depth", (("mode", "standard-4"),))] == 0
    finally:
        proc.terminate()
        proc.wait(10)


def test_no_metrics_port_by_default(redis_url: str, redis_namespace: str) -> None:
    proc = _matchmaker(redis_url, redis_namespace)
    try:
        assert proc.stdout is not None
        assert "metrics_port" not in json.loads(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait(10)
