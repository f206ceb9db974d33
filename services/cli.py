"""The ``arena`` command: one argparse tree over every service and tool.

This module is the table of contents: each entry names a sub-command, says in one line what it
does, and points at the two functions of the service that define its options and run it
(thin entry points: they parse and call one function). Options several commands share (Redis,
listening, consumer group, games, ``--json``) come from :mod:`services.cliargs`.
"""

from __future__ import annotations

import argparse
import sys

from .bots import bench as bots_bench
from .bots import engine_bench, selfplay
from .bots import worker as bots_worker
from .cliargs import Command, Group, Parser, ToolError
from .engine import worker as engine_worker
from .eventlog import bench as eventlog_bench
from .eventlog import commands as eventlog
from .eventlog import migrate
from .eventlog.reconnect import is_outage
from .matchmaking import bench as matchmaking_bench
from .matchmaking import service as matchmaking
from .platform import cli as platform
from .play import bench as play_bench
from .ports import PortBusy
from .replay import bench as replay_bench
from .replay import server as replay_server
from .rules.scenario import runner as scenario

COMMANDS: dict[str, Command | Group] = {
    "up": Command(
        "Redis, engines, bots, matchmaker and web viewer on this machine",
        platform.up_arguments,
        platform.up_command,
    ),
    "tournament": Command(
        "seeded bot games through the platform; resumable; win rates, ratings",
        platform.tournament_arguments,
        platform.tournament_command,
    ),
    "scenario": Command(
        "run scenario files and folders (PASS/FAIL each)", scenario.add_arguments, scenario.main
    ),
    "selfplay": Command(
        "play seeded games in-process and summarise them", selfplay.add_arguments, selfplay.main
    ),
    "bench": Group(
        "benchmarks (JSON out, CPU time beside wall time)",
        {
            "engine": Command(
                "the rules engine in-process: random games, forks, memory",
                engine_bench.add_arguments,
                engine_bench.main,
            ),
            "eventlog": Command(
                "event-log append and rebuild against raw redis-py",
                eventlog_bench.add_arguments,
                eventlog_bench.main,
            ),
            "e2e": Command(
                "the same games in-process and through the platform",
                platform.bench_e2e_arguments,
                platform.bench_e2e_command,
            ),
            "replay": Command(
                "SSE fan-out latency to N spectators beside raw XREAD",
                replay_bench.add_arguments,
                replay_bench.main,
            ),
            "matchmaking": Command(
                "tickets matched per second; notify latency over gRPC",
                matchmaking_bench.add_arguments,
                matchmaking_bench.main,
            ),
            "bots": Command(
                "all-bot games per second through engine and bot worker processes",
                bots_bench.add_arguments,
                bots_bench.main,
            ),
            "play": Command(
                "simulated people over the HTTP API while bot games run: answer latency",
                play_bench.add_arguments,
                play_bench.main,
            ),
        },
    ),
    "export": Command(
        "write a game's log from Redis to a self-verifying file",
        eventlog.export_arguments,
        eventlog.export_command,
    ),
    "verify": Command(
        "check a game's hash chain, seed commitment and re-run",
        eventlog.verify_arguments,
        eventlog.verify_command,
    ),
    "archive": Command(
        "move a finished game from Redis into the archive folder",
        eventlog.archive_arguments,
        eventlog.archive_command,
    ),
    "migrate": Command(
        "move a Redis from the layout before partitions into the partitioned one (once)",
        migrate.add_arguments,
        migrate.main,
    ),
    "catalog": Command(
        "rebuild the archive's catalog from its files",
        eventlog.catalog_arguments,
        eventlog.catalog_command,
    ),
    "engine": Command(
        "an engine worker: arena:matches consumer, GameService on gRPC",
        engine_worker.add_arguments,
        engine_worker.main,
    ),
    "replay-server": Command(
        "web viewer, HTTP/SSE and gRPC replay and live spectating",
        replay_server.add_arguments,
        replay_server.main,
    ),
    "matchmaker": Command(
        "Matchmaker on gRPC: tickets, tables, bot backfill, ratings consumer",
        matchmaking.add_arguments,
        matchmaking.main,
    ),
    "ratings": Group(
        "recompute ratings from the archive, or print a leaderboard",
        {
            "rebuild": Command(
                "recompute every rating from the archive folder",
                matchmaking.rebuild_arguments,
                matchmaking.rebuild_command,
            ),
            "show": Command(
                "a mode's leaderboard from Redis (JSON)",
                matchmaking.show_arguments,
                matchmaking.show_command,
            ),
        },
    ),
    "bots": Command(
        "a bot worker: answers bot seats' decisions from arena:decisions",
        bots_worker.add_arguments,
        bots_worker.main,
    ),
}


def _add(sub: argparse._SubParsersAction[Parser], name: str, entry: Command | Group) -> None:
    p = sub.add_parser(name, help=entry.help, description=entry.help)
    if isinstance(entry, Group):
        inner = p.add_subparsers(title="commands", metavar="COMMAND", required=True)
        for inner_name, command in entry.commands.items():
            _add(inner, inner_name, command)
        return
    entry.add_arguments(p)
    p.set_defaults(_run=entry.run, _prog=p.prog)


def parser() -> Parser:
    """The whole ``arena`` tree (defaults that read the environment read it now)."""
    root = Parser(
        prog="arena",
        description="Arena: an event-sourced platform for Sanguosha-family card games.",
        epilog="`arena COMMAND --help` shows a command's options.",
    )
    sub = root.add_subparsers(title="commands", metavar="COMMAND")
    for name, entry in COMMANDS.items():
        _add(sub, name, entry)
    return root


def main(argv: list[str] | None = None) -> int:
    """Run ``arena COMMAND ...``; returns the exit code (2 for bad arguments)."""
    p = parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not hasattr(args, "_run"):  # `arena` alone
        p.print_help()
        return 2
    try:
        code: int = args._run(args)
    except (PortBusy, ToolError) as exc:  # one line (the port and its flag …), no traceback
        print(f"{args._prog}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if not is_outage(exc):
            raise
        url = getattr(args, "redis_url", None) or "Redis"
        print(f"{args._prog}: cannot reach {url} ({type(exc).__name__})", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
