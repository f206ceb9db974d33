"""`arena engine`: consume arena:matches, serve GameService, sweep deadlines, export metrics."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from ..cliargs import trim_option, worker_options
from ..contracts import tokens
from ..contracts.streams import MATCHES, BadMessage, NewMatch, decode
from ..errors import Refused
from ..eventlog import archive
from ..eventlog.redis_store import RedisEventStore
from ..gctune import tune_gc
from ..lifecycle import finished, run_main, started
from ..observability import mean_ms, serve
from ..ports import check_free
from ..readside.clock import ServerClock
from ..redisinfra.durability import NotDurable, StorageWatch, fsync_ack_mode
from ..redisinfra.liveness import BEAT_S, SILENT_S, Liveness
from ..redisinfra.partitions import group_consumers, run_all
from ..redisinfra.reconnect import forever, watch_health
from ..redisinfra.redis_client import connect
from ..redisinfra.streams import GroupConsumer, Message
from ..redisinfra.trim import StreamKeeper
from .grpc_server import make_server, set_serving
from .service import CACHE_SIZE, MAX_DECISIONS, MAX_LOG_ENTRIES, Games
from .side import RedisSide
from .watchdog import ABANDON_MS, EVERY_S, STALL_MS, RedisLogs, Watchdog

GROUP = MATCHES.groups[0]
# A quiet matches partition's read blocks this long (a match arriving ends it at once; claims
# of a dead engine's matches are looked at between reads; stop cancels it): 16 partitions read
# every half second, each with its claim checks, were a large share of an idle engine's CPU
MATCH_BLOCK_MS = 2000
ALL, PEOPLE = "all", "people"  # `--role`


async def handle_match(games: Games, consumer: GroupConsumer, msg: Message) -> None:
    """Create the game of one arena:matches message (a NewMatch).

    A match that can never start (malformed, unknown ruleset …) goes straight to the dead
    letters; anything else that fails is retried by the group (and by another worker if this one
    dies).
    """
    try:
        await games.create_game(decode(msg.fields, NewMatch))
    except (BadMessage, Refused) as exc:
        if isinstance(exc, Refused) and exc.code not in ("INVALID_ARGUMENT",):
            raise
        await consumer.dead_letter(msg, f"bad match: {exc}")


async def run(args: argparse.Namespace) -> None:
    """Run one worker until SIGTERM/SIGINT."""
    secret = tokens.require_secret("arena engine")  # no secret, no start
    check_free(args.host, args.port, "--port")  # a busy port: one line, before waiting on Redis
    # named in CLIENT LIST: an operator (and the chaos test) sees which worker polls
    client = connect(args.redis_url, client_name=f"arena-engine:{args.consumer}")
    side = RedisSide(client, args.namespace)
    clock = ServerClock(client.time)  # entries carry Redis TIME: the delay is measured on it
    who = f"arena engine {args.consumer}"
    stop = await started(client, args.namespace, who)
    loop = asyncio.get_running_loop()
    # acknowledged only once fsynced: WAITAOF where Redis has it, else its appendfsync always
    wait_aof = args.fsync_ack and await fsync_ack_mode(client) == "waitaof"
    await clock.sync()
    games = Games(
        RedisEventStore(
            client,
            args.namespace,
            wait_replicas=args.wait_replicas,
            wait_timeout_ms=args.wait_timeout_ms,
            wait_aof=wait_aof,
        ),
        side,
        secret,
        cache_size=args.cache_size,
        snapshot_every=args.snapshot_every,
        default_time_limit_ms=args.time_limit_ms,
        bot_repost_ms=args.bot_repost_ms,
        spectator_delay_ms=args.spectator_delay_ms,
        clock=clock,
        archive_dir=Path(args.archive_dir) if args.archive_dir else None,
        max_decisions=args.max_decisions,
        max_log_entries=args.max_log_entries,
    )
    games.metrics.bot_sessions.set_function(lambda: len(games.sessions.open))
    if games.archive_dir is not None:  # what an engine killed mid-write left
        await asyncio.to_thread(archive.sweep_temp, games.archive_dir)
    server, port, checker = make_server(games, args.host, args.port)
    health = Health(checker, who)
    tune_gc()
    await server.start()
    await health.update()
    if args.metrics_port is not None:
        serve(args.metrics_port, games.metrics.registry, args.host)
    # a people's engine takes no match: the bot-only games are made (and kept) elsewhere, and
    # the people's games come to it from the web server and the bot workers (--people-engine)
    consumers = (
        []
        if args.role == PEOPLE
        else group_consumers(
            client, args.namespace, MATCHES, args.consumer, min_idle_ms=args.claim_idle_ms
        )
    )

    def on_match(consumer: GroupConsumer) -> Callable[[Message], Awaitable[None]]:
        async def handle(msg: Message) -> None:
            await handle_match(games, consumer, msg)

        return handle

    synced, keyed = loop.time(), 0.0

    async def sweep() -> None:
        nonlocal synced, keyed
        if loop.time() - keyed > 5:  # (again after a Redis that came back without its data)
            await client.set(tokens.bot_key_name(args.namespace), games.bot_key)
            keyed = loop.time()
        await games.sweep()
        if loop.time() - synced > 60:  # keep measuring the Redis clock's offset
            await clock.sync()
            synced = loop.time()

    async def stalled(seconds: float) -> None:
        # the peers moved this worker's games on meanwhile: its copies are stale; not serving
        # until the next round of the sessions' beat (a second)
        await health.down("stalled", f"stood still for {seconds:.1f} s")
        games.cache.clear()

    liveness = Liveness(
        client,
        args.namespace,
        f"engine:{args.consumer}",
        games.metrics.registry,
        silent_s=args.silent_ms / 1000,
        stalled=stalled,
    )

    async def beat() -> None:
        await health.up("stalled")  # a round after a stall: serving again
        for session in games.sessions.tick(BEAT_S, args.bot_silent_ms / 1000):
            quiet = loop.time() - session.heard  # (both on the monotonic clock)
            _say(
                f"{who}: bot session of {session.worker} silent for {quiet:.1f} s (hung?): "
                "its decisions go to the decisions stream"
            )
            await games.hand_back(session)

    redis_why = ["Redis unavailable"]  # what the health watch last found wrong
    print(json.dumps({"port": port, "consumer": args.consumer, "role": args.role}), flush=True)
    tasks = [
        *run_all(consumers, on_match, stop, block_ms=MATCH_BLOCK_MS),
        asyncio.create_task(forever(f"{who}: deadline sweep", sweep, stop, args.sweep_ms / 1000)),
        asyncio.create_task(forever(f"{who}: bot sessions", beat, stop, BEAT_S)),
        asyncio.create_task(liveness.run(stop)),
        asyncio.create_task(
            watch_health(
                client,
                lambda up: health.set("redis", up, redis_why[0]),
                stop,
                say=False,
                why=lambda words: redis_why.__setitem__(0, words),
            )
        ),
    ]
    storage = StorageWatch(
        client,
        games.archive_dir,
        games.metrics.registry,
        lambda store, ok, why: health.set(f"disk:{store}", ok, why),
        lambda line: _say(f"{who}: {line}"),
    )
    games.storage = storage
    tasks.append(asyncio.create_task(forever(f"{who}: disk watch", storage.once, stop, 1.0)))
    if args.watchdog_ms > 0:
        watchdog = Watchdog(
            games,
            RedisLogs(client, args.namespace),
            stall_ms=args.stall_after_ms,
            abandon_ms=args.abandon_after_ms,
            say=_say,
        )
        tasks.append(asyncio.create_task(watchdog.run(stop, args.watchdog_ms / 1000)))
    if args.trim_ms > 0:
        keeper = StreamKeeper(
            client,
            args.namespace,
            games.metrics.registry,
            interval_s=args.trim_ms / 1000,
            name="arena engine",
        )
        tasks.append(asyncio.create_task(keeper.run(stop)))
    await stop.wait()
    await health.down("stopping")
    await server.stop(grace=2)
    await finished(tasks, client)
    print(
        json.dumps(
            {
                "consumer": args.consumer,
                "batched": {
                    "appends": _batched(games.store),
                    "append_calls": _calls(games.store),
                    "side": _batched(side),
                    "session_pushes": games.sessions.pushed,
                    "session_handed_back": games.sessions.handed_back,
                    "session_messages": games.sessions.sent(),
                },
                "action_ms_mean": mean_ms(games.metrics.latency),
                # answers logged here by table: people's or bot-only (arena_engine_table_answers)
                "table_answers": {
                    table: n for (c, table), n in games.metrics.counts.items() if c == "tables"
                },
            }
        ),
        flush=True,
    )


class Health:
    """The worker's gRPC health: SERVING unless some reason says otherwise (Redis away, a disk
    it cannot write, a stall it just woke from); each change is one line."""

    def __init__(self, checker: object, who: str) -> None:
        self.checker, self.who = checker, who
        self.reasons: dict[str, str] = {}
        self.serving: bool | None = None

    async def down(self, key: str, why: str = "") -> None:
        """Not serving, for `why`."""
        self.reasons[key] = why or key
        await self.update()

    async def up(self, key: str) -> None:
        """`key`'s reason is gone."""
        if self.reasons.pop(key, None) is not None or self.serving is None:
            await self.update()

    async def set(self, key: str, ok: bool, why: str) -> None:
        """`up(key)` if `ok`, else `down(key, why)` at once."""
        if ok:
            await self.up(key)
        else:
            await self.down(key, why)

    async def update(self) -> None:
        """Report the state to the health service (and say so when it changes)."""
        serving = not self.reasons
        if serving != self.serving:
            if self.serving is not None:
                why = "; ".join(self.reasons.values())
                state = "SERVING" if serving else f"NOT_SERVING ({why})"
                _say(f"{self.who}: health {state}")
            self.serving = serving
            await set_serving(self.checker, serving)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _calls(store: object) -> dict[str, int]:
    """How many appends went in how many script calls (appends.py)."""
    appender = getattr(store, "appender", None)
    if appender is None:
        return {}
    return {"appends": appender.batcher.items, "calls": appender.calls}


def _batched(owner: object) -> dict[str, int]:
    """How many Redis commands went out in how many pipelines (AutoPipeline counters)."""
    auto = getattr(owner, "auto", None)
    if auto is None:
        return {}
    return {"commands": auto.batcher.items, "pipelines": auto.batcher.batches}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena engine` options."""
    p.description = "Run one engine worker: arena:matches consumer, GameService on gRPC."
    worker_options(
        p,
        "arena:matches",
        30_000,
        "take over matches pending this long with a dead worker",
        50051,
        "GameService gRPC port (0: any free port)",
    )
    p.add_argument(
        "--archive-dir",
        default=None,
        help="archive finished games here (default: they stay in Redis)",
    )
    p.add_argument(
        "--role",
        choices=(ALL, PEOPLE),
        default=ALL,
        help="all: take matches from arena:matches and serve any game; people: a people's "
        "engine, which takes no match and serves the games the web server and the bot "
        "workers send it (theirs with a person seated, when they are given its address as "
        "--people-engine), so a person's call does not queue behind the bot-only games",
    )
    p.add_argument(
        "--time-limit-ms",
        type=int,
        default=60_000,
        help="default time per decision: a silent person's seat is answered by default then, "
        "a bot seat's after this plus --bot-repost-ms (every bot worker gone or wedged)",
    )
    p.add_argument(
        "--bot-repost-ms",
        type=int,
        default=5_000,
        help="publish an unanswered bot decision again after this long",
    )
    p.add_argument(
        "--sweep-ms",
        type=int,
        default=250,
        help="how often deadlines are checked (time-outs, bot reposts)",
    )
    trim_option(p)
    p.add_argument(
        "--silent-ms",
        type=int,
        default=int(SILENT_S * 1000),
        help="a worker whose heartbeat (every second, in Redis) stops this long is reported "
        "silent (hung or dead); a beat of this worker that comes this late means it stood "
        "still, and it drops its cached games",
    )
    p.add_argument(
        "--bot-silent-ms",
        type=int,
        default=int(SILENT_S * 1000),
        help="end a bot session whose worker sent nothing (not even its heartbeat) this long, "
        "and publish its decisions to the decisions stream",
    )
    p.add_argument(
        "--max-decisions",
        type=int,
        default=MAX_DECISIONS,
        help="end a game that has made this many decisions and goes on (a draw, reason "
        "decision_limit in its log): a runaway must not grow Redis without bound",
    )
    p.add_argument(
        "--max-log-entries",
        type=int,
        default=MAX_LOG_ENTRIES,
        help="end a game whose log reaches this many entries (a draw, reason log_limit)",
    )
    p.add_argument(
        "--watchdog-ms",
        type=int,
        default=int(EVERY_S * 1000),
        help="how often every live log is looked at for stalled games (0: never)",
    )
    p.add_argument(
        "--stall-after-ms",
        type=int,
        default=STALL_MS,
        help="a game whose log has not moved this long, with no deadline to wait for, is "
        "stalled: reported (arena_engine_games_stalled) and recovered",
    )
    p.add_argument(
        "--abandon-after-ms",
        type=int,
        default=ABANDON_MS,
        help="a stalled game that has not moved this long is ended as abandoned (a draw, "
        "reason stalled in its log)",
    )
    p.add_argument(
        "--cache-size",
        type=int,
        default=CACHE_SIZE,
        help="games kept in memory (~100-200 kB each); a game in play that falls out is read "
        "back from its log at its next answer, so keep it above the games in flight",
    )
    p.add_argument(
        "--spectator-delay-ms",
        type=int,
        default=0,
        help="hold GameService spectators (no seat token) this far behind the live game "
        "(give the replay server the same value)",
    )
    p.add_argument(
        "--snapshot-every", type=int, default=200, help="events between snapshots of a game"
    )
    p.add_argument(
        "--wait-replicas",
        type=int,
        default=0,
        metavar="N",
        help="acknowledge an append only once N replicas have it (WAIT in the same round "
        "trip; else UNAVAILABLE and the caller retries): a failover then loses no "
        "acknowledged answer; 0: Redis's asynchronous replication, faster",
    )
    p.add_argument(
        "--wait-timeout-ms",
        type=int,
        default=1000,
        help="how long WAIT waits for the replicas (and WAITAOF for the fsync)",
    )
    p.add_argument(
        "--fsync-ack",
        action="store_true",
        help="acknowledge an answer only once Redis has it fsynced to its disk: WAITAOF on "
        "Redis 7.2+, else Redis must run with appendfsync always (checked at start); without "
        "it an acknowledged answer is in Redis's memory and its AOF, fsynced within a second "
        "(docs/durability.md)",
    )


def main(args: argparse.Namespace) -> int:
    """Run the worker until SIGTERM/SIGINT."""
    return run_main("arena engine", run(args), (NotDurable,))
