"""Argument parsing for `arena up`, `arena tournament` and `arena bench e2e`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .up import UpConfig, run_up

D = UpConfig()


def _platform_args(p: argparse.ArgumentParser, engines: int, bots: int) -> None:
    p.add_argument("--engines", type=int, default=engines, help="engine workers")
    p.add_argument("--bots", type=int, default=bots, help="bot workers")
    p.add_argument(
        "--var",
        type=Path,
        default=D.var_dir,
        help="local state: redis/ (data, AOF), archive/, logs/, up.json",
    )
    p.add_argument("--namespace", default=D.namespace, help="Redis key and stream prefix")
    p.add_argument(
        "--redis-url",
        default=None,
        help="use this Redis (default: $REDIS_URL, else start redis-server)",
    )


def up_parser() -> argparse.ArgumentParser:
    """`arena up` arguments (ports: 0 = any free port)."""
    p = argparse.ArgumentParser(
        prog="arena up",
        description=(
            "Start Redis, engine and bot workers, the matchmaker and the replay/web server; "
            "Ctrl-C or SIGTERM stops them all."
        ),
    )
    _platform_args(p, 1, 1)
    p.add_argument("--host", default=D.host, help="address every service binds")
    p.add_argument(
        "--redis-port",
        type=int,
        default=D.redis_port,
        help="port of the started redis-server (default 0: a free port)",
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
        help="keep N bot games running (default 3) so the viewer shows something",
    )
    p.add_argument(
        "--no-persist",
        action="store_true",
        help="a throw-away redis-server instead of AOF under VAR/redis",
    )
    p.add_argument("--json", action="store_true", help="print where things listen as JSON")
    return p


def up_main(argv: list[str]) -> int:
    """`arena up`."""
    a = up_parser().parse_args(argv)
    cfg = UpConfig(
        engines=a.engines,
        bots=a.bots,
        var_dir=a.var,
        namespace=a.namespace,
        host=a.host,
        redis_url=a.redis_url,
        redis_port=a.redis_port,
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
    )
    return run_up(cfg, a.json)


def _options(text: str) -> dict[str, object]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--options must be a JSON object")
    return value


def tournament_main(argv: list[str]) -> int:
    """`arena tournament`."""
    p = argparse.ArgumentParser(
        prog="arena tournament",
        description=(
            "Play seeded bot games through the platform (a running `arena up`, else one started "
            "for the run); resumable: the same arguments continue where a run stopped."
        ),
    )
    p.add_argument("--ruleset", default="standard")
    p.add_argument("--players", type=int, default=5)
    p.add_argument("--games", type=int, default=100)
    p.add_argument(
        "--policies",
        default="heuristic,random",
        help="comma-separated bot policies: heuristic, random",
    )
    p.add_argument("--seed", type=int, default=1, help="game i is dealt with seed SEED + i")
    p.add_argument(
        "--assign",
        choices=["seat", "camp"],
        default="seat",
        help="rotate policies over seats, or give whole camps one policy",
    )
    p.add_argument("--options", type=_options, default={}, help="ruleset options as JSON")
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
    _platform_args(p, 1, 1)
    a = p.parse_args(argv)
    from .tournament import Spec, TournamentError, run_tournament

    spec = Spec(
        ruleset=a.ruleset,
        players=a.players,
        games=a.games,
        policies=[x for x in a.policies.split(",") if x],
        seed=a.seed,
        assign=a.assign,
        options=a.options,
    )
    cfg = UpConfig(
        engines=a.engines,
        bots=a.bots,
        var_dir=a.var,
        namespace=a.namespace,
        redis_url=a.redis_url,
        persist=False,
        matchmaker=False,
        replay=False,
        engine_port=0,
        metrics_port=0,
        replay_grpc_port=0,
        http_port=0,
    )
    try:
        return run_tournament(spec, cfg, a.out, a.concurrency, a.json)
    except TournamentError as exc:
        print(f"arena tournament: {exc}", file=sys.stderr)
        return 2


def bench_e2e_main(argv: list[str]) -> int:
    """`arena bench e2e`."""
    p = argparse.ArgumentParser(
        prog="arena bench e2e",
        description=(
            "The same seeded games in-process and through the platform (engine and bot workers "
            "as processes, real Redis, real gRPC) with 1 and 2 engine workers; JSON out."
        ),
    )
    p.add_argument("--ruleset", default="standard")
    p.add_argument("--players", type=int, default=5)
    p.add_argument(
        "--games",
        type=int,
        default=200,
        help="games, all running at once (a few dozen measure mostly the longest)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--policy",
        default="random,heuristic",
        help="bot policies to measure, comma-separated (random, heuristic)",
    )
    p.add_argument("--engines", default="1,2", help="engine worker counts to measure")
    p.add_argument("--bots", type=int, default=1, help="bot workers")
    p.add_argument("--repeat", type=int, default=3, help="in-process runs (median taken)")
    p.add_argument("--redis-url", default=None, help="default: a throw-away redis-server")
    p.add_argument("--json", action="store_true", help="print JSON only (the default output)")
    a = p.parse_args(argv)
    policies = [x for x in a.policy.split(",") if x]
    engines = [int(x) for x in a.engines.split(",") if x.strip().isdigit()]
    bad = [x for x in policies if x not in ("random", "heuristic")]
    if bad or not policies or not engines or a.games < 1 or a.repeat < 1:
        p.error(
            f"need policies from random,heuristic (got {a.policy!r}), engine counts "
            f"(got {a.engines!r}), --games and --repeat of at least 1"
        )
    from .bench import bench_e2e

    try:
        out = [
            bench_e2e(
                a.ruleset, a.players, a.games, a.seed, pol, engines, a.bots, a.redis_url, a.repeat
            )
            for pol in policies
        ]
    except RuntimeError as exc:
        print(f"arena bench e2e: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out[0] if len(out) == 1 else {"results": out}))
    return 0
