"""The ``arena`` command: one argparse tree over every service and tool.

This module is the table of contents: each entry names a sub-command, says in one line what it
does, and names the module whose two functions define its options and run it (thin entry
points: they parse and call one function). Options several commands share (Redis, listening,
consumer group, games, ``--json``) come from :mod:`services.cliargs`. A command's module is
imported only when that command runs, so `arena up` starts without importing every benchmark.
"""

from __future__ import annotations

import argparse
import sys

from .cliargs import Command, Group, Parser, ToolError
from .ports import PortBusy

COMMANDS: dict[str, Command | Group] = {
    "up": Command(
        "Redis, engines, bots, matchmaker and web viewer on this machine",
        "services.platform.cli",
        "up_arguments",
        "up_command",
    ),
    "tournament": Command(
        "seeded bot games through the platform; resumable; win rates, ratings",
        "services.platform.cli",
        "tournament_arguments",
        "tournament_command",
    ),
    "scenario": Command(
        "run scenario files and folders (PASS/FAIL each)", "services.rules.scenario.runner"
    ),
    "selfplay": Command(
        "play seeded games in-process and summarise them", "services.bots.selfplay"
    ),
    "fit": Group(
        "refit the bots' and the chart's models from self-play (prints the module to commit)",
        {
            "likelihoods": Command(
                "the role belief's likelihoods (services/bots/likelihoods.py)", "services.bots.fit"
            ),
            "value": Command(
                "the look-ahead's state value (services/bots/valuemodel.py)",
                "services.bots.valuefit",
            ),
            "chart": Command(
                "the win-chance chart's models (services/readside/chartmodel.py)",
                "services.bots.valuepublic",
            ),
        },
    ),
    "bench": Group(
        "benchmarks (JSON out, CPU time beside wall time)",
        {
            "engine": Command(
                "the rules engine in-process: random games, forks, memory",
                "services.bench.engine",
            ),
            "eventlog": Command(
                "event-log append and rebuild against raw redis-py",
                "services.bench.eventlog",
            ),
            "service": Command(
                "the engine worker's service layer in-process, beside the rules alone",
                "services.bench.service",
            ),
            "callgrind": Command(
                "instructions per decision under callgrind: rules, engine service, bot worker",
                "services.bench.callgrind",
            ),
            "e2e": Command(
                "the same games in-process and through the platform",
                "services.bench.e2e_command",
                "bench_e2e_arguments",
                "bench_e2e_command",
            ),
            "replay": Command(
                "SSE fan-out latency to N spectators beside raw XREAD",
                "services.bench.replay",
            ),
            "matchmaking": Command(
                "tickets matched per second; notify latency over gRPC",
                "services.bench.matchmaking",
            ),
            "bots": Command(
                "all-bot games per second through engine and bot worker processes",
                "services.bench.bots",
            ),
            "play": Command(
                "simulated people over the HTTP API while bot games run: answer latency",
                "services.bench.play",
            ),
            "idle": Command("an arena up nobody uses: each process's CPU", "services.bench.idle"),
        },
    ),
    "export": Command(
        "write a game's log from Redis to a self-verifying file",
        "services.verify.commands",
        "export_arguments",
        "export_command",
    ),
    "verify": Command(
        "check a game's hash chain, seed commitment and re-run",
        "services.verify.commands",
        "verify_arguments",
        "verify_command",
    ),
    "platform-key": Command(
        "print the public key the platform signs its archives with (arena verify --key)",
        "services.verify.commands",
        "platform_key_arguments",
        "platform_key_command",
    ),
    "archive": Command(
        "move a finished game from Redis into the archive folder",
        "services.verify.commands",
        "archive_arguments",
        "archive_command",
    ),
    "migrate": Command(
        "move a Redis from the layout before partitions into the partitioned one (once)",
        "services.redisinfra.migrate",
    ),
    "catalog": Command(
        "rebuild the archive's catalog from its files",
        "services.verify.commands",
        "catalog_arguments",
        "catalog_command",
    ),
    "engine": Command(
        "an engine worker: arena:matches consumer, GameService on gRPC",
        "services.engine.worker",
    ),
    "replay-server": Command(
        "web viewer, HTTP/SSE and gRPC replay and live spectating",
        "services.webserver",
    ),
    "matchmaker": Command(
        "Matchmaker on gRPC: tickets, tables, bot backfill, ratings consumer",
        "services.matchmaking.service",
    ),
    "ratings": Group(
        "recompute ratings from the archive, or print a leaderboard",
        {
            "rebuild": Command(
                "recompute every rating from the archive folder",
                "services.matchmaking.service",
                "rebuild_arguments",
                "rebuild_command",
            ),
            "show": Command(
                "a mode's leaderboard from Redis (JSON)",
                "services.matchmaking.service",
                "show_arguments",
                "show_command",
            ),
        },
    ),
    "bots": Command(
        "a bot worker: answers bot seats' decisions from arena:decisions",
        "services.bots.worker",
    ),
    "bot-account": Group(
        "Bot API accounts (docs/botapi.md): issue one and its token, list, revoke",
        {
            "create": Command(
                "issue a bot account and its token (shown once)",
                "services.play.accounts_cli",
                "create_bot_arguments",
                "create_bot_command",
            ),
            "list": Command(
                "the newest bot accounts (JSON)",
                "services.play.accounts_cli",
                "list_bots_arguments",
                "list_bots_command",
            ),
            "revoke": Command(
                "stop a bot's token working (its account, games and rating stay)",
                "services.play.accounts_cli",
                "revoke_bot_arguments",
                "revoke_bot_command",
            ),
        },
    ),
    "organiser-token": Group(
        "organisers' tokens: create tournaments and bot accounts from the browser",
        {
            "create": Command(
                "issue an organiser token (shown once)",
                "services.play.accounts_cli",
                "create_organiser_arguments",
                "create_organiser_command",
            ),
            "revoke": Command(
                "stop an organiser token working",
                "services.play.accounts_cli",
                "revoke_organiser_arguments",
                "revoke_organiser_command",
            ),
        },
    ),
}


def _add(
    sub: argparse._SubParsersAction[Parser],
    name: str,
    entry: Command | Group,
    chosen: list[str] | None,
) -> None:
    """Add `name` to the tree. With `chosen` (the words of the command line), only the command
    those words choose gets its options (importing its module); the others are a line of help."""
    p = sub.add_parser(name, help=entry.help, description=entry.help)
    if isinstance(entry, Group):
        inner = p.add_subparsers(title="commands", metavar="COMMAND", required=True)
        rest = None if chosen is None else chosen[1:]
        for inner_name, command in entry.commands.items():
            _add(inner, inner_name, command, rest if rest and rest[0] == inner_name else rest)
        return
    if chosen is None or chosen[:1] == [name]:
        entry.add_arguments(p)
    p.set_defaults(_run=entry.run, _prog=p.prog)


def parser(argv: list[str] | None = None) -> Parser:
    """The ``arena`` tree (defaults that read the environment read it now): every command's
    options, or, given the command line `argv`, only those of the command it names."""
    root = Parser(
        prog="arena",
        description="Arena: an event-sourced platform for Sanguosha-family card games.",
        epilog="`arena COMMAND --help` shows a command's options.",
    )
    sub = root.add_subparsers(title="commands", metavar="COMMAND")
    words = None if argv is None else [a for a in argv if not a.startswith("-")]
    for name, entry in COMMANDS.items():
        _add(sub, name, entry, None if words is None else (words if words[:1] == [name] else []))
    return root


def main(argv: list[str] | None = None) -> int:
    """Run ``arena COMMAND ...``; returns the exit code (2 for bad arguments)."""
    argv = sys.argv[1:] if argv is None else argv
    p = parser(argv)
    args, extra = p.parse_known_args(argv)
    if extra:  # named by the command they were given to, which lists its own options
        prog = getattr(args, "_prog", p.prog)
        p.exit(
            2, f"{prog}: error: unrecognized arguments: {' '.join(extra)} (see `{prog} --help`)\n"
        )
    if not hasattr(args, "_run"):  # `arena` alone
        p.print_help()
        return 2
    try:
        code: int = args._run(args)
    except (PortBusy, ToolError) as exc:  # one line (the port and its flag …), no traceback
        print(f"{args._prog}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from .redisinfra.reconnect import is_outage  # not at start-up: it imports redis-py

        if not is_outage(exc):
            raise
        from .redisinfra.server import redacted  # a URL from up.json carries its password

        url = redacted(getattr(args, "redis_url", None) or "Redis")
        print(f"{args._prog}: cannot reach {url} ({type(exc).__name__})", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
