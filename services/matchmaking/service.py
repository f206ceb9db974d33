"""`arena matchmaker` and `arena ratings`: process entry points (argument parsing and wiring)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..cliargs import json_object, tool_redis, tool_redis_options, trim_option, worker_options
from ..contracts import tokens
from ..contracts.streams import FINISHED
from ..eventlog.redis_store import RedisEventStore
from ..lifecycle import finished, run_main, started
from ..observability import serve, stop_serving
from ..ports import check_free
from ..redisinfra.partitions import group_consumers, run_all
from ..redisinfra.reconnect import forever, watch_health
from ..redisinfra.redis_client import connect
from ..redisinfra.streams import GroupConsumer, Message
from ..redisinfra.trim import StreamKeeper
from .clock import SystemClock
from .consumer import GROUP, Ratings, rebuild
from .core import Matchmaker
from .grpc_server import MatchmakerServicer, Notifier, make_server, set_serving
from .metrics import Metrics
from .modes import Policy, build_modes
from .rating_store import RatingStore

FINISHED_BLOCK_MS = 2000
"""How long a read of a quiet `finished` partition blocks. A finished game ends it at once, and
`stop` cancels it; what it bounds is how often a quiet partition is read (and looked at for
stale entries: a dead reader's are claimed up to this much later than `--claim-idle-ms`
allows). 500 ms cost the idle matchmaker 32 reads a second over 16 partitions, 2 s is 8, as
the engine's `matches` reads; it stays well below the client's 5 s socket timeout."""

IDLE_TICK_MS = 1000
"""How often a quiet matchmaker ticks (nobody queued, no table open; `Matchmaker.quiet_wait`):
a ticket enqueued in this process wakes it at once, one enqueued through another matchmaker
sharing the Redis wakes that one (here it is seen within this)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena matchmaker` options."""
    p.description = "Run a matchmaker: gRPC Matchmaker, table forming, ratings from arena:finished."
    worker_options(
        p,
        "arena:finished",
        30_000,
        "take over finished games pending this long (dead reader)",
        50052,
        "Matchmaker gRPC port (0: any free port)",
    )
    p.add_argument(
        "--archive-dir", default=None, help="where finished games are archived (default: none)"
    )
    p.add_argument("--tick-ms", type=int, default=200, help="how often tables are formed")
    trim_option(p)
    p.add_argument(
        "--ticket-ttl-ms",
        type=int,
        default=30_000,
        help="a ticket nobody watches expires after this long",
    )
    p.add_argument(
        "--bot-after-ms",
        type=int,
        default=30_000,
        help="bots fill empty seats after the oldest ticket waited this long (0 never)",
    )
    p.add_argument(
        "--min-humans", type=int, default=1, help="humans a table needs before bots fill it"
    )
    p.add_argument("--window", type=float, default=3.0, help="initial rating window (mu)")
    p.add_argument("--widen-per-s", type=float, default=0.5, help="window growth per second")
    p.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="MODE=JSON",
        type=_mode_policy,
        help="per mode or ruleset, e.g. honglou-10='{\"bot_after_ms\": 0}' (repeatable)",
    )
    p.add_argument(
        "--time-limit-ms", type=int, default=0, help="per human decision (0: the engine's)"
    )


def _policies(args: argparse.Namespace) -> tuple[Policy, dict[str, Policy]]:
    base = Policy(
        bot_after_ms=args.bot_after_ms,
        min_humans=args.min_humans,
        window=args.window,
        widen_per_s=args.widen_per_s,
    )
    return base, {name: replace(base, **fields) for name, fields in args.policy}


def _mode_policy(text: str) -> tuple[str, dict[str, Any]]:
    """An argparse type: ``MODE=JSON``, the JSON an object of :class:`Policy` fields."""
    name, _, raw = text.partition("=")
    fields = json_object(raw)
    unknown = set(fields) - {f.name for f in dataclasses.fields(Policy)}
    if not name or unknown:
        raise argparse.ArgumentTypeError(
            f"want MODE={{POLICY FIELDS AS JSON}}; unknown fields: {sorted(unknown)}"
        )
    return name, fields


async def run(args: argparse.Namespace) -> None:
    """Serve until SIGTERM/SIGINT."""
    secret = tokens.require_secret("arena matchmaker")  # no secret, no start
    check_free(args.host, args.port, "--port")  # a busy port: one line, before waiting on Redis
    client = connect(args.redis_url)
    who = f"arena matchmaker {args.consumer}"
    stop = await started(client, args.namespace, who)
    base, overrides = _policies(args)
    ratings = RatingStore(client, args.namespace)
    metrics = Metrics()
    mm = Matchmaker(
        client,
        build_modes(overrides, base),
        secret,
        SystemClock(),
        ratings=ratings,
        namespace=args.namespace,
        ticket_ttl_ms=args.ticket_ttl_ms,
        time_limit_ms=args.time_limit_ms,
        metrics=metrics,
    )
    notifier = Notifier(client, mm.channel)
    heartbeat = max(0.05, min(1.0, args.ticket_ttl_ms / 3000))
    server, port, checker = make_server(
        MatchmakerServicer(mm, notifier, ratings, heartbeat), args.host, args.port
    )
    await server.start()
    await set_serving(checker)
    archive = Path(args.archive_dir) if args.archive_dir else None
    rater = Ratings(RedisEventStore(client, args.namespace), ratings, archive, metrics)
    consumers = group_consumers(
        client, args.namespace, FINISHED, args.consumer, group=GROUP, min_idle_ms=args.claim_idle_ms
    )

    def on_finished(consumer: GroupConsumer) -> Callable[[Message], Awaitable[None]]:
        async def handle(msg: Message) -> None:
            await rater.on_finished(consumer, msg)

        return handle

    exporter = (
        serve(args.metrics_port, metrics.registry, args.host)
        if args.metrics_port is not None
        else None
    )

    async def tick() -> None:
        await mm.tick()
        # nobody queued, no table open: the next tick after IDLE_TICK_MS, or at the usual
        # interval after a ticket enqueued here (no later than now)
        await mm.quiet_wait(max(0.0, IDLE_TICK_MS - args.tick_ms) / 1000)

    ready = {"port": port, "consumer": args.consumer}
    if exporter is not None:
        ready["metrics_port"] = exporter.server_port
    print(json.dumps(ready), flush=True)
    tasks = [
        asyncio.create_task(forever(f"{who}: tick", tick, stop, args.tick_ms / 1000)),
        asyncio.create_task(watch_health(client, lambda up: set_serving(checker, up), stop)),
        asyncio.create_task(notifier.run(stop)),
        *run_all(consumers, on_finished, stop, block_ms=FINISHED_BLOCK_MS),
    ]
    if args.trim_ms > 0:
        keeper = StreamKeeper(
            client,
            args.namespace,
            metrics.registry,
            interval_s=args.trim_ms / 1000,
            name="arena matchmaker",
        )
        tasks.append(asyncio.create_task(keeper.run(stop)))
    await stop.wait()
    await set_serving(checker, False)
    await server.stop(grace=1)
    if exporter is not None:
        await asyncio.to_thread(stop_serving, exporter)
    await finished(tasks, client)


def main(args: argparse.Namespace) -> int:
    """`arena matchmaker`: serve until SIGTERM/SIGINT."""
    return run_main("arena matchmaker", run(args))


def rebuild_arguments(p: argparse.ArgumentParser) -> None:
    """`arena ratings rebuild` options."""
    p.add_argument("archive_dir", help="the archive folder (GAME.arena files)")
    p.add_argument(
        "--write", action="store_true", help="replace the ratings in Redis with the rebuilt ones"
    )
    tool_redis_options(p)


def show_arguments(p: argparse.ArgumentParser) -> None:
    """`arena ratings show` options."""
    p.add_argument("mode", help="a mode, e.g. standard-5")
    p.add_argument("--limit", type=int, default=20, help="rows")
    tool_redis_options(p)


def rebuild_command(args: argparse.Namespace) -> int:
    """`arena ratings rebuild`: recompute every rating from the archive folder."""
    folder = Path(args.archive_dir)
    if not folder.is_dir():
        print(f"arena ratings: no folder {folder}", file=sys.stderr)
        return 2

    async def go(store: RatingStore | None) -> int:
        tables, skipped = await rebuild(folder, store)
        print(json.dumps({"modes": tables, "skipped": skipped}, ensure_ascii=False))
        return 0

    if not args.write:  # a dry run needs no Redis
        return asyncio.run(go(None))
    return asyncio.run(_on_ratings(args, go))


def show_command(args: argparse.Namespace) -> int:
    """`arena ratings show`: a mode's leaderboard from Redis, as JSON."""

    async def go(store: RatingStore) -> int:
        rows = await store.leaderboard(args.mode, 0, args.limit)
        fields = ("mu", "sigma", "ordinal", "games")
        board = [{"player": n, **{f: getattr(r, f) for f in fields}} for n, r in rows]
        print(json.dumps(board, ensure_ascii=False))
        return 0

    return asyncio.run(_on_ratings(args, go))


async def _on_ratings(
    args: argparse.Namespace, action: Callable[[RatingStore], Awaitable[int]]
) -> int:
    args.redis_url, namespace = tool_redis(args)
    client = connect(args.redis_url)
    try:
        return await action(RatingStore(client, namespace))
    finally:
        await client.aclose()
