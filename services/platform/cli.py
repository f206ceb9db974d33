"""The options of `arena up`, `arena tournament` and `arena bench e2e`, and what they run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cliargs import game_options
from ..redisinfra.redis_client import redis_options
from ..tournaments.spec import Spec
from .supervise import Policy
from .tournament import OUTAGE_GIVE_UP_S, TournamentError, run_tournament
from .up import UpConfig
from .up_command import run_up

D = UpConfig()


def _platform_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engines", type=int, default=D.engines, help="engine workers")
    p.add_argument("--bots", type=int, default=D.bots, help="bot workers")
    p.add_argument(
        "--var",
        type=Path,
        default=D.var_dir,
        help="local state: redis/ (data, AOF), archive/, logs/, up.json",
    )
    redis_options(p, start=True)
    p.add_argument(
        "--wait-replicas",
        type=int,
        default=0,
        metavar="N",
        help="engines acknowledge an answer only once N replicas have it (WAIT): no "
        "acknowledged answer is lost in a failover; 0: asynchronous replication",
    )
    p.add_argument(
        "--redis-cluster",
        type=int,
        default=0,
        metavar="N",
        help="start a local Redis Cluster of N (>= 3) masters with one replica each instead of "
        "one redis-server (ignored with --redis-url)",
    )
    p.add_argument(
        "--fsync-ack",
        action="store_true",
        help="engines acknowledge an answer only once Redis has it fsynced to disk (the Redis "
        "this starts runs appendfsync always; a given one needs 7.2+ or that setting); "
        "default: fsynced within a second (docs/durability.md)",
    )


def up_arguments(p: argparse.ArgumentParser) -> None:
    """`arena up` options (ports: 0 = any free port)."""
    p.description = (
        "Start Redis, engine and bot workers, the matchmaker and the replay/web server; "
        "Ctrl-C or SIGTERM stops them all."
    )
    _platform_args(p)
    p.add_argument(
        "--people-engines",
        type=int,
        default=D.people_engines,
        help="engine workers for the games people sit at, apart from the --engines that take "
        "the matches and the bot-only games (arena engine --role people; the web server and "
        "the bot workers are given them as --people-engine); 0: every engine serves every game",
    )
    p.add_argument(
        "--bot-nice",
        type=int,
        default=D.bot_nice,
        metavar="N",
        help="run the processes that serve only bot games N steps below this one's scheduling "
        "priority (nice), so that people's work has the CPU first when it is short: the "
        "--engines, while --people-engines run (0 to 19; default 0: all alike)",
    )
    p.add_argument("--host", default=D.host, help="address every service binds")
    p.add_argument(
        "--redis-port",
        type=int,
        default=D.redis_port,
        help="port of the started redis-server (0: a free port)",
    )
    p.add_argument("--http-port", type=int, default=D.http_port, help="web viewer (HTTP/SSE)")
    p.add_argument(
        "--replay-grpc-port", type=int, default=D.replay_grpc_port, help="ReplayService gRPC"
    )
    p.add_argument("--matchmaker-port", type=int, default=D.matchmaker_port, help="Matchmaker gRPC")
    p.add_argument(
        "--engine-port",
        type=int,
        default=D.engine_port,
        help="GameService gRPC of engine 0; engine i listens on this + i",
    )
    p.add_argument(
        "--metrics-port",
        type=int,
        default=D.metrics_port,
        help="/metrics of engine 0 (engine i: +i, bot worker j: +100+j; 0: no "
        "/metrics on any service)",
    )
    p.add_argument(
        "--matchmaker-metrics-port",
        type=int,
        default=D.matchmaker_metrics_port,
        help="/metrics of the matchmaker (0: any free port; listed in up.json)",
    )
    p.add_argument(
        "--replay-metrics-port",
        type=int,
        default=D.replay_metrics_port,
        help="/metrics of the replay server (0: any free port; listed in up.json)",
    )
    p.add_argument(
        "--bot-policy",
        default=D.bot_policy,
        choices=["heuristic", "random"],
        help="policy of bot seats whose player id names none",
    )
    p.add_argument(
        "--demo",
        type=int,
        nargs="?",
        const=3,
        default=0,
        metavar="N",
        help="keep N bot games running (N: 3 if omitted) so the viewer shows something",
    )
    p.add_argument(
        "--think-ms",
        type=int,
        default=600,
        help="each bot pauses this long before it answers: a pace people can watch and play "
        "against (0: at once)",
    )
    p.add_argument(
        "--spectator-delay-ms",
        type=int,
        default=D.spectator_delay_ms,
        metavar="MS",
        help="hold spectators this far behind the live game, on the engines' GameService and "
        "the replay/web server alike (seats see their own game live)",
    )
    p.add_argument(
        "--no-persist",
        action="store_true",
        help="a throw-away redis-server instead of AOF under VAR/redis",
    )
    p.add_argument(
        "--restart-limit",
        type=int,
        default=D.restart.limit,
        help="a service that dies is restarted (with backoff); one that dies this many times "
        "within --restart-window-s is crash-looping and stops the platform",
    )
    p.add_argument(
        "--restart-window-s", type=float, default=D.restart.window_s, help="see --restart-limit"
    )
    p.add_argument("--json", action="store_true", help="print where things listen as JSON")


def up_command(a: argparse.Namespace) -> int:
    """`arena up`: run until Ctrl-C or SIGTERM."""
    if a.people_engines < 0:
        print("arena up: --people-engines must be 0 or more", file=sys.stderr)
        return 2
    if not 0 <= a.bot_nice <= 19:
        print(f"arena up: --bot-nice must be 0 to 19 (got {a.bot_nice})", file=sys.stderr)
        return 2
    cfg = UpConfig(
        engines=a.engines,
        people_engines=a.people_engines,
        bots=a.bots,
        var_dir=a.var,
        namespace=a.namespace,
        host=a.host,
        redis_url=a.redis_url,
        redis_port=a.redis_port,
        redis_cluster=a.redis_cluster,
        wait_replicas=a.wait_replicas,
        fsync_ack=a.fsync_ack,
        persist=not a.no_persist,
        http_port=a.http_port,
        replay_grpc_port=a.replay_grpc_port,
        matchmaker_port=a.matchmaker_port,
        engine_port=a.engine_port,
        metrics_port=a.metrics_port,
        matchmaker_metrics_port=a.matchmaker_metrics_port,
        replay_metrics_port=a.replay_metrics_port,
        bot_policy=a.bot_policy,
        demo=a.demo,
        think_ms=a.think_ms,
        spectator_delay_ms=a.spectator_delay_ms,
        bot_nice=a.bot_nice,
        restart=Policy(limit=max(1, a.restart_limit), window_s=a.restart_window_s),
    )
    return run_up(cfg, a.json)


def tournament_arguments(p: argparse.ArgumentParser) -> None:
    """`arena tournament` options."""
    p.description = (
        "Play seeded bot games through the platform (a running `arena up`, else one started "
        "for the run); resumable: the same arguments continue where a run stopped."
    )
    game_options(p, players=5, games=100)
    p.add_argument(
        "--policies",
        "--entrants",
        default="heuristic,random",
        help="comma-separated entrants: built-in policies (heuristic, random, easy, hard) and "
        "bot accounts (b-…: external bots on the Bot API, docs/botapi.md)",
    )
    p.add_argument(
        "--time-limit-ms",
        type=int,
        default=15_000,
        help="per decision of a bot account (then the server answers for it)",
    )
    p.add_argument(
        "--hosted-after",
        type=int,
        default=2,
        help="a bot account's time-outs in a row before its seat goes on 托管 (0: never)",
    )
    p.add_argument(
        "--assign",
        choices=["seat", "camp"],
        default="seat",
        help="rotate policies over seats, or give whole camps one policy",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=0,
        help="games in flight at once (default 100 per engine worker: the workers "
        "batch the answers of games in flight, so more games use the cores better)",
    )
    p.add_argument(
        "--out", type=Path, default=None, help="results JSON (default VAR/tournaments/KEY.json)"
    )
    p.add_argument("--json", action="store_true", help="no progress bar; print the results JSON")
    p.add_argument(
        "--outage-give-up-s",
        type=float,
        default=OUTAGE_GIVE_UP_S,
        help="a Redis outage (away, BUSY, LOADING, refusing writes) longer than this ends the "
        "run in one line; the same command continues it",
    )
    p.add_argument(
        "--deployed",
        type=Path,
        default=None,
        metavar="ARCHIVE_DIR",
        help="play through a running deployment's engine and bot workers (compose, Kubernetes) "
        "on --redis-url or $REDIS_URL, reading finished games from ARCHIVE_DIR, the folder its "
        "engines archive to; start nothing (default: none, `arena up`'s or a platform of its "
        "own)",
    )
    _platform_args(p)


def tournament_command(a: argparse.Namespace) -> int:
    """`arena tournament`: play the games (or the rest of them); print the results."""
    spec = Spec(
        ruleset=a.ruleset,
        players=a.players,
        games=a.games,
        policies=[x for x in a.policies.split(",") if x],
        seed=a.seed,
        assign=a.assign,
        options=a.options,
        time_limit_ms=a.time_limit_ms,
        hosted_after=a.hosted_after,
    )
    cfg = UpConfig(
        engines=a.engines,
        bots=a.bots,
        var_dir=a.var,
        namespace=a.namespace,
        redis_url=a.redis_url,
        redis_cluster=a.redis_cluster,
        wait_replicas=a.wait_replicas,
        fsync_ack=a.fsync_ack,
        persist=False,
        matchmaker=False,
        replay=False,
        engine_port=0,
        metrics_port=0,
        replay_grpc_port=0,
        http_port=0,
    )
    try:
        return run_tournament(
            spec, cfg, a.out, a.concurrency, a.json, a.deployed, a.outage_give_up_s
        )
    except TournamentError as exc:
        print(f"arena tournament: {exc}", file=sys.stderr)
        return 2
