"""`arena matchmaker` and `arena ratings`: process entry points (argument parsing and wiring)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

from ..engine import tokens
from ..eventlog.redis_client import connect
from ..eventlog.redis_store import RedisEventStore
from ..eventlog.streams import GroupConsumer, Message
from ..observability import serve, stop_serving
from .clock import SystemClock
from .consumer import GROUP, Ratings, rebuild
from .core import Matchmaker
from .grpc_server import MatchmakerServicer, Notifier, make_server, set_serving
from .metrics import Metrics
from .modes import Policy, build_modes
from .rating_store import RatingStore


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="arena matchmaker",
        description="run a matchmaker: gRPC Matchmaker, table forming, ratings from arena:finished",
    )
    p.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--namespace", default="arena", help="key and stream prefix")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=50052, help="gRPC port (0 = any free port)")
    p.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve /metrics here (0 = any free port; default: none)",
    )
    p.add_argument(
        "--consumer",
        default=f"{socket.gethostname()}-{os.getpid()}",
        help="consumer name in the arena:finished ratings group",
    )
    p.add_argument("--archive-dir", default=None, help="where finished games are archived")
    p.add_argument("--tick-ms", type=int, default=200, help="how often tables are formed")
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
    p.add_argument("--min-humans", type=int, default=1)
    p.add_argument("--window", type=float, default=3.0, help="initial rating window (mu)")
    p.add_argument("--widen-per-s", type=float, default=0.5, help="window growth per second")
    p.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="MODE=JSON",
        help="per mode or ruleset, e.g. honglou-10='{\"bot_after_ms\": 0}'",
    )
    p.add_argument("--time-limit-ms", type=int, default=0, help="per human decision (0 = engine)")
    p.add_argument("--claim-idle-ms", type=int, default=30_000)
    return p


def _policies(args: argparse.Namespace) -> tuple[Policy, dict[str, Policy]]:
    base = Policy(
        bot_after_ms=args.bot_after_ms,
        min_humans=args.min_humans,
        window=args.window,
        widen_per_s=args.widen_per_s,
    )
    out: dict[str, Policy] = {}
    for item in args.policy:
        name, _, text = item.partition("=")
        out[name] = Policy(**{**base.__dict__, **json.loads(text)})
    return base, out


async def run(args: argparse.Namespace) -> None:
    """Serve until SIGTERM/SIGINT."""
    client = connect(args.redis_url)
    base, overrides = _policies(args)
    ratings = RatingStore(client, args.namespace)
    metrics = Metrics()
    mm = Matchmaker(
        client,
        build_modes(overrides, base),
        tokens.secret_from_env(),
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
    consumer = GroupConsumer(
        client,
        f"{args.namespace}:finished",
        GROUP,
        args.consumer,
        min_idle_ms=args.claim_idle_ms,
        dead_stream=f"{args.namespace}:dead",
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def on_finished(msg: Message) -> None:
        await rater.on_finished(consumer, msg)

    async def ticker() -> None:
        while not stop.is_set():
            try:
                await mm.tick()
            except Exception as exc:  # noqa: BLE001 - keep matching; report
                print(f"arena matchmaker: tick failed: {exc!r}", file=sys.stderr, flush=True)
            await asyncio.sleep(args.tick_ms / 1000)

    exporter = serve(args.metrics_port, metrics.registry) if args.metrics_port is not None else None
    ready = {"port": port, "consumer": args.consumer}
    if exporter is not None:
        ready["metrics_port"] = exporter.server_port
    print(json.dumps(ready), flush=True)
    tasks = [
        asyncio.create_task(ticker()),
        asyncio.create_task(notifier.run(stop)),
        asyncio.create_task(consumer.run(on_finished, stop, block_ms=500)),
    ]
    await stop.wait()
    await set_serving(checker, False)
    await server.stop(grace=1)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    if exporter is not None:
        await asyncio.to_thread(stop_serving, exporter)
    await client.aclose()


def main(argv: list[str]) -> int:
    """`arena matchmaker [options]`."""
    asyncio.run(run(_parser().parse_args(argv)))
    return 0


def ratings_main(argv: list[str]) -> int:
    """`arena ratings rebuild|show`: recompute from the archive, or print a leaderboard."""
    p = argparse.ArgumentParser(prog="arena ratings")
    sub = p.add_subparsers(dest="action", required=True)
    rb = sub.add_parser("rebuild", help="recompute every rating from the archive folder")
    rb.add_argument("archive_dir")
    rb.add_argument(
        "--write", action="store_true", help="replace the ratings in Redis with the rebuilt ones"
    )
    show = sub.add_parser("show", help="a mode's leaderboard from Redis")
    show.add_argument("mode")
    show.add_argument("--limit", type=int, default=20)
    for q in (rb, show):
        q.add_argument(
            "--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
        )
        q.add_argument("--namespace", default="arena")
    args = p.parse_args(argv)
    return asyncio.run(_ratings(args))


async def _ratings(args: argparse.Namespace) -> int:
    client = connect(args.redis_url)
    try:
        store = RatingStore(client, args.namespace)
        if args.action == "rebuild":
            folder = Path(args.archive_dir)
            if not folder.is_dir():
                print(f"arena ratings: no folder {folder}", file=sys.stderr)
                return 2
            tables, skipped = await rebuild(folder, store if args.write else None)
            print(json.dumps({"modes": tables, "skipped": skipped}, ensure_ascii=False))
            return 0
        rows = await store.leaderboard(args.mode, 0, args.limit)
        print(
            json.dumps(
                [
                    {
                        "player": n,
                        "mu": r.mu,
                        "sigma": r.sigma,
                        "ordinal": r.ordinal,
                        "games": r.games,
                    }
                    for n, r in rows
                ],
                ensure_ascii=False,
            )
        )
        return 0
    finally:
        await client.aclose()
