"""``arena replay-server``: the web server process. The replay server's HTTP/SSE viewer and
gRPC ReplayService over one Redis (services/replay), with the play API, the Bot API and
tournaments mounted beside it (services/play/web.py) when it is given a matchmaker and engines.

Its own part (services/layers.py: webserver): it composes replay and play, which sit below it,
so that replay never imports play.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
from pathlib import Path

from .cliargs import listen_options
from .contracts.tokens import require_secret
from .eventlog.redis_store import RedisEventStore
from .gctune import tune_gc
from .observability import serve as serve_metrics
from .observability import stop_serving
from .play.ratelimit import trusted_proxy_option
from .play.web import mount
from .ports import check_free
from .readside.access import TablePolicy, hmac_seat_check
from .readside.clock import ServerClock
from .redisinfra.reconnect import is_outage, until_reachable
from .redisinfra.redis_client import redis_options
from .replay.core import Replay
from .replay.decisions import EngineDecisions
from .replay.http import HttpServer, Router
from .replay.metrics import Metrics

log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena replay-server` options."""
    p.description = (
        "Serve replays and live spectating: the web viewer and HTTP/SSE API, and gRPC "
        "ReplayService."
    )
    listen_options(p, 0, "ReplayService gRPC port (0: no gRPC)")
    p.add_argument("--http-port", type=int, default=8080, help="web viewer and HTTP/SSE API port")
    redis_options(p, start=True)
    p.add_argument(
        "--archive",
        type=Path,
        default=Path("var/archive"),
        help="folder of finished games (GAME.arena + catalog.jsonl)",
    )
    p.add_argument(
        "--spectator-delay-ms",
        type=int,
        default=0,
        help="hold live spectators at least this far behind",
    )
    p.add_argument(
        "--god-delay-ms",
        type=int,
        default=None,
        help="allow the god view of live games this far behind (default: only at the end)",
    )
    p.add_argument(
        "--engine",
        default="",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="engine workers' GameService: the live table shows the pending "
        "decision (its public part; none if absent), and people's answers go there",
    )
    p.add_argument(
        "--people-engine",
        default="",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="people's engines (arena engine --role people): the play API's calls (people's "
        "answers, their seats' decisions, 托管) go there first, and to --engine only when "
        "they are hung or gone, so a person's answer does not wait behind the bot-only games "
        "(default: none, every call to --engine)",
    )
    p.add_argument(
        "--matchmaker",
        default="",
        metavar="HOST:PORT",
        help="the matchmaker: with it (and --engine) the server also serves the play API "
        "(services/play: people sit down, open and join tables, play their seats)",
    )
    p.add_argument(
        "--answers-per-s",
        type=int,
        default=20,
        help="play API: answers a seat may send per second (more: 429)",
    )
    trusted_proxy_option(p)
    p.add_argument(
        "--secure-cookie",
        action="store_true",
        help="play API: mark the session cookie Secure (when served over HTTPS)",
    )
    p.add_argument(
        "--tournaments",
        type=Path,
        default=None,
        help="tournaments' folder: specs and journals (default: beside --archive, e.g. "
        "var/tournaments, where `arena tournament` writes)",
    )


WEB_GC_THRESHOLDS = (5_000, 50, 20)
"""The web server's collector (gctune.tune_gc, its set-up frozen): young collections every
5,000 objects, not the workers' 50,000. Each of the web server's young collections goes over
what its feeds took in since the last and frees the finished requests' and streams' cycles
(asyncio transports, tracebacks): at 50,000 a collection took ~60 ms of CPU and 576-965 ms
of wall on the loaded machine, every request in flight waiting; at 5,000 the longest was 82-84
ms of wall for about the same CPU a run (issue 44, docs/benchmarks.md). The middle generation
is collected every 250,000 objects' worth (the workers' every 500,000), the whole heap every
5,000,000 as theirs."""


async def serve(
    args: argparse.Namespace, ready: asyncio.Event | None = None, *, own_process: bool = False
) -> None:
    """Run until cancelled (or SIGINT/SIGTERM); `own_process`: the process is the web
    server's alone (`main`), so its collector is set as the workers' is (gctune.py)."""
    secret = require_secret("arena replay-server")  # seat tokens are checked with it
    check_free(args.host, args.http_port, "--http-port")  # a busy port: one line, at once
    check_free(args.host, args.port, "--port")
    store = RedisEventStore.from_url(args.redis_url, args.namespace)
    policy = TablePolicy(args.spectator_delay_ms, args.god_delay_ms)
    clock = ServerClock(store.client.time)  # entries carry Redis TIME: measure delays on it
    await until_reachable(store.client, "arena replay-server")  # restarted while Redis is
    await clock.sync()
    engines = [a for a in args.engine.split(",") if a]
    decisions = EngineDecisions(engines) if engines else None  # names: every engine
    metrics = Metrics()
    replay = Replay(
        store,
        args.archive,
        seat_check=hmac_seat_check(secret),
        secret=secret,
        policy=lambda h: policy,
        clock=clock,
        decisions=decisions,
        metrics=metrics,
    )
    exporter = None
    if args.metrics_port is not None:
        exporter = serve_metrics(args.metrics_port, metrics.registry, args.host)
    close_play = None
    routers: list[Router] = []
    if args.matchmaker and engines:  # the play API, the Bot API and tournaments beside it
        _, routers, close_play = mount(replay, store.client, args, engines)
    http = HttpServer(replay, routers)
    if own_process:
        # at CPython's thresholds, beside 100 people and 50 bot games (issue 44), the web
        # server collected ~700 times a minute and scanned its whole heap every ~10 s: 64-103
        # ms of CPU each (86-572 ms of wall at load 4-5), every request in flight waiting
        tune_gc(WEB_GC_THRESHOLDS)
    http_port = await http.start(args.host, args.http_port)
    # one line: `arena up` waits for it, and reads the ports it names
    also = f" (/metrics on port {exporter.server_port})" if exporter is not None else ""
    print(f"replay-server: web viewer on http://{args.host}:{http_port}/{also}", flush=True)
    grpc_server = None
    if args.port:
        from .replay.grpc_service import start_grpc

        grpc_server, grpc_port = await start_grpc(replay, f"{args.host}:{args.port}")
        print(f"replay-server: gRPC ReplayService on {args.host}:{grpc_port}", flush=True)
    tasks: list[asyncio.Task[object]] = [asyncio.create_task(_resync(clock))]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
    finally:
        for t in tasks:
            t.cancel()
        if grpc_server is not None:
            await grpc_server.stop(1)
        await http.close()
        if close_play is not None:
            await close_play()
        await replay.close()
        await store.aclose()
        if exporter is not None:
            await asyncio.to_thread(stop_serving, exporter)


async def _resync(clock: ServerClock) -> object:
    while True:
        await asyncio.sleep(60)
        try:
            await clock.sync()
        except Exception as exc:  # Redis restarting: keep the last offset
            if not is_outage(exc):
                log.exception("measuring the Redis clock")


def main(args: argparse.Namespace) -> int:
    """Entry point of ``arena replay-server``."""
    require_secret("arena replay-server")  # before anything starts
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args.redis_url = args.redis_url or os.environ.get("REDIS_URL")
    if args.redis_url:
        asyncio.run(serve(args, own_process=True))
        return 0
    from .redisinfra.server import RedisServer, find_server_binary

    binary = find_server_binary()
    if binary is None:
        print("arena replay-server: no REDIS_URL and no redis-server found", flush=True)
        return 2
    with RedisServer(persist=False, binary=binary) as redis:
        args.redis_url = redis.url
        print(f"replay-server: started {redis.url} (throw-away)", flush=True)
        asyncio.run(serve(args, own_process=True))
    return 0
