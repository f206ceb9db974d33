"""The ``arena`` command: one entry point for every service and tool.

Each sub-command is a thin shim: it parses arguments and calls one function of a service module.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

Command = Callable[[list[str]], int]


def _json_options(text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--options must be a JSON object: {err}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--options must be a JSON object")
    return value


def _game_args(p: argparse.ArgumentParser, games: int) -> None:
    p.add_argument("--ruleset", default="standard")
    p.add_argument("--players", type=int, default=8)
    p.add_argument("--games", type=int, default=games)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--options",
        type=_json_options,
        default={},
        help="ruleset options as JSON, e.g. '{\"double_renegade\": true}'",
    )
    p.add_argument("--json", action="store_true", help="print JSON only")


def cmd_scenario(argv: list[str]) -> int:
    """arena scenario run PATH... — run scenario files and folders."""
    p = argparse.ArgumentParser(prog="arena scenario", description=cmd_scenario.__doc__)
    p.add_argument("action", choices=["run"])
    p.add_argument("paths", nargs="+")
    args = p.parse_args(argv)
    from .rules.scenario.runner import main

    return main(args.paths)


def cmd_selfplay(argv: list[str]) -> int:
    """arena selfplay — play seeded games in-process and summarise them."""
    p = argparse.ArgumentParser(prog="arena selfplay", description=cmd_selfplay.__doc__)
    _game_args(p, 100)
    p.add_argument(
        "--policies", default="random", help="comma-separated: random, heuristic, oracle"
    )
    p.add_argument(
        "--assign",
        default="seat",
        choices=["seat", "camp"],
        help="rotate the policies over seats (game i: seat s plays policy (s+i) mod k)"
        " or over whole camps (lord's side, rebels, renegades)",
    )
    args = p.parse_args(argv)
    from .bots.selfplay import selfplay
    from .rules.api import UnknownOption

    try:
        out = selfplay(
            args.ruleset,
            args.players,
            args.games,
            args.seed,
            args.policies.split(","),
            args.options,
            args.assign,
        )
    except (UnknownOption, ValueError) as err:
        print(f"arena selfplay: {err}", file=sys.stderr)
        return 2
    print(
        json.dumps(out, ensure_ascii=False)
        if args.json
        else json.dumps(out, indent=2, ensure_ascii=False)
    )
    return 0


BENCHES = {  # arena bench NAME -> the module whose main(argv) runs it (JSON out)
    "replay": "services.replay.bench",
    "matchmaking": "services.matchmaking.bench",
    "bots": "services.bots.bench",
}


def cmd_bench(argv: list[str]) -> int:
    """arena bench engine|eventlog|e2e|replay|matchmaking|bots — benchmarks, JSON out."""
    names = ("engine", "eventlog", "e2e", *BENCHES)
    if not argv or argv[0] not in names:
        print(f"usage: arena bench {'|'.join(names)} [options]", file=sys.stderr)
        return 2
    what, rest = argv[0], argv[1:]
    if what == "e2e":
        from .platform.cli import bench_e2e_main

        return bench_e2e_main(rest)
    if what in BENCHES:
        import importlib

        code: int = importlib.import_module(BENCHES[what]).main(rest)
        return code
    if what == "eventlog":
        pe = argparse.ArgumentParser(prog="arena bench eventlog")
        pe.add_argument(
            "--redis-url",
            default=None,
            help="an existing Redis (default: start a throw-away redis-server)",
        )
        pe.add_argument("--size", type=int, default=4000, help="events per run")
        pe.add_argument("--rounds", type=int, default=3)
        pe.add_argument("--json", action="store_true")
        ea = pe.parse_args(rest)
        from .eventlog.bench import bench_eventlog

        try:
            print(json.dumps(bench_eventlog(ea.redis_url, ea.size, ea.rounds)))
        except RuntimeError as err:
            print(f"arena bench eventlog: {err}", file=sys.stderr)
            return 2
        return 0
    p = argparse.ArgumentParser(prog="arena bench engine")
    _game_args(p, 200)
    args = p.parse_args(rest)
    from .rules.api import UnknownOption
    from .rules.bench import bench_engine

    try:
        out = bench_engine(args.ruleset, args.players, args.games, args.seed, args.options)
    except UnknownOption as err:
        print(f"arena bench engine: {err}", file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


def cmd_replay_server(argv: list[str]) -> int:
    """arena replay-server — web viewer, HTTP/SSE and gRPC replay and live spectating."""
    from .replay.server import main

    return main(argv)


def _eventlog(name: str) -> Command:
    def run(argv: list[str]) -> int:
        from .eventlog import commands

        fn: Command = getattr(commands, f"{name}_cli")
        return fn(argv)

    run.__doc__ = f"arena {name} — see services/eventlog/README.md"
    return run


def cmd_engine(argv: list[str]) -> int:
    """arena engine — an engine worker: arena:matches consumer, GameService on gRPC."""
    from .engine.worker import main

    return main(argv)


def cmd_matchmaker(argv: list[str]) -> int:
    """arena matchmaker — Matchmaker on gRPC: tickets, tables, bot backfill, ratings consumer."""
    from .matchmaking.service import main

    return main(argv)


def cmd_ratings(argv: list[str]) -> int:
    """arena ratings rebuild|show — recompute ratings from the archive, or print a leaderboard."""
    from .matchmaking.service import ratings_main

    return ratings_main(argv)


def cmd_bots(argv: list[str]) -> int:
    """arena bots — a bot worker: answers bot seats' decisions from arena:decisions."""
    from .bots.worker import main

    return main(argv)


def cmd_up(argv: list[str]) -> int:
    """arena up — Redis, engines, bots, matchmaker and web viewer on this machine."""
    from .platform.cli import up_main

    return up_main(argv)


def cmd_tournament(argv: list[str]) -> int:
    """arena tournament — seeded bot games through the platform; resumable; win rates, ratings."""
    from .platform.cli import tournament_main

    return tournament_main(argv)


COMMANDS: dict[str, Command] = {
    "up": cmd_up,
    "tournament": cmd_tournament,
    "scenario": cmd_scenario,
    "selfplay": cmd_selfplay,
    "bench": cmd_bench,
    "export": _eventlog("export"),
    "verify": _eventlog("verify"),
    "archive": _eventlog("archive"),
    "catalog": _eventlog("catalog"),
    "engine": cmd_engine,
    "replay-server": cmd_replay_server,
    "matchmaker": cmd_matchmaker,
    "ratings": cmd_ratings,
    "bots": cmd_bots,
}


def main(argv: list[str] | None = None) -> int:
    """Dispatch ``arena COMMAND ...``."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        print("usage: arena COMMAND [ARGS]\n\ncommands:", file=sys.stderr)
        for name, fn in COMMANDS.items():
            print(f"  {name:10} {(fn.__doc__ or '').strip().splitlines()[0]}", file=sys.stderr)
        return 0 if args and args[0] in ("-h", "--help") else 2
    return COMMANDS[args[0]](args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
