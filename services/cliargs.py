"""The pieces of the `arena` command tree that commands share.

`services/cli.py` builds one argparse tree from :class:`Command` entries; each service defines
its own options next to its code (an ``add_arguments(parser)`` and a ``run(args) -> int``) and
takes the option groups several commands share from here, so a flag such as ``--redis-url``
is defined once: its name, its default and its help.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from .redisinfra.redis_client import (  # the Redis options live there
    REDIS_SCHEMES,
    redis_options,
    redis_url,
)
from .targets import parse_list


@dataclass(frozen=True)
class Command:
    """One `arena` sub-command: a line of help, and the module whose two functions define its
    options and run it.

    The module is imported only when the command is chosen (or its options are listed), so
    `arena up` pays for what `arena up` runs, not for every benchmark's imports: start-up time
    is what a busy port's one-line refusal costs. ``run`` gets the parsed arguments and returns
    the process exit code.
    """

    help: str
    module: str  # e.g. "services.platform.cli"
    adder: str = "add_arguments"
    runner: str = "main"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's options to ``parser`` (imports its module)."""
        add: Callable[[argparse.ArgumentParser], None] = getattr(
            importlib.import_module(self.module), self.adder
        )
        add(parser)

    def run(self, args: argparse.Namespace) -> int:
        """Run the command (imports its module)."""
        main: Callable[[argparse.Namespace], int] = getattr(
            importlib.import_module(self.module), self.runner
        )
        return main(args)


@dataclass(frozen=True)
class Group:
    """A sub-command with sub-commands of its own (`arena bench engine`, `arena ratings show`)."""

    help: str
    commands: dict[str, Command] = field(default_factory=dict)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, unless the help already says it.

    Options off by default (flags, and options whose absence means "none") say in their own
    words what happens without them, so their help is left as written.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            "(default" in text
            or "default:" in text
            or action.default is None
            or action.default is False
            or action.default is argparse.SUPPRESS
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2.

    An unknown sub-command is named, with the sub-commands there are.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE`` and a pointer to the help; exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def _check_value(self, action: argparse.Action, value: object) -> None:
        if isinstance(action, argparse._SubParsersAction) and value not in action.choices:
            names = ", ".join(action.choices)
            raise argparse.ArgumentError(None, f"unknown command {value!r}; commands: {names}")
        super()._check_value(action, value)


def json_object(text: str) -> dict[str, object]:
    """An argparse type: a JSON object (ruleset options)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not JSON: {err}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            "must be a JSON object, e.g. '{\"double_renegade\": true}'"
        )
    return value


def int_list(text: str) -> list[int]:
    """An argparse type: comma-separated counts of at least 1, e.g. ``1,2``."""
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        out = []
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"want counts of at least 1, e.g. 1,2 (got {text!r})")
    return out


def address_list(text: str) -> list[str]:
    """An argparse type: gRPC addresses, comma-separated (``HOST:PORT[,HOST:PORT...]``; a HOST
    that is a DNS name stands for every address it resolves to: services/targets.py)."""
    try:
        return parse_list(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def names(*choices: str) -> Callable[[str], list[str]]:
    """An argparse type: comma-separated names, each one of ``choices``."""

    def parse(text: str) -> list[str]:
        out = [x.strip() for x in text.split(",") if x.strip()]
        if not out or set(out) - set(choices):
            raise argparse.ArgumentTypeError(
                f"want comma-separated names from {', '.join(choices)} (got {text!r})"
            )
        return out

    return parse


class ToolError(Exception):
    """What a tool says on one line before it exits with status 2 (no traceback)."""


def tool_redis_options(p: argparse.ArgumentParser) -> None:
    """``--redis-url``, ``--namespace`` and ``--var`` of a tool that reads a platform's Redis
    (export, verify, archive, ratings): by default the running `arena up` of ``VAR/up.json``;
    see :func:`tool_redis`."""
    g = p.add_argument_group("platform")
    g.add_argument(
        "--redis-url",
        type=redis_url,
        default=None,
        help="the Redis to use (default: the running `arena up` of VAR/up.json, else $REDIS_URL)",
    )
    g.add_argument(
        "--namespace", default=None, help="Redis key prefix (default: the platform's, or arena)"
    )
    g.add_argument("--var", type=Path, default=Path("var"), help="where `arena up` keeps up.json")


def tool_redis(args: argparse.Namespace) -> tuple[str, str]:
    """(Redis URL, namespace) for a tool: ``--redis-url`` if given, else the running platform
    in ``VAR/up.json``, else $REDIS_URL; ToolError (one line) if none, or the URL is bad."""
    from .running import STATE_FILE, find_running

    url, namespace = args.redis_url, args.namespace
    if not url:
        run = find_running(args.var)
        if run is not None:
            url, namespace = run.redis_url, namespace or run.namespace
        else:
            url = os.environ.get("REDIS_URL")
    if not url:
        raise ToolError(
            f"no running platform ({args.var / STATE_FILE} names none) and no --redis-url: "
            "start `arena up`, or pass --redis-url"
        )
    if not url.startswith(REDIS_SCHEMES):
        raise ToolError(f"bad --redis-url {url!r}: want redis://HOST:PORT/DB")
    return url, namespace or "arena"


def bench_options(p: argparse.ArgumentParser, *, redis: bool = True) -> None:
    """What every `arena bench` takes: ``--json`` (and ``--redis-url`` if it uses Redis).

    A bench defaults to a throw-away redis-server rather than $REDIS_URL: it measures a quiet
    Redis, and it never writes into one that holds real games.
    """
    p.add_argument("--json", action="store_true", help="print JSON only (the default output)")
    if redis:
        p.add_argument(
            "--redis-url",
            type=redis_url,
            default=None,
            help="an existing Redis (default: start a throw-away redis-server)",
        )


def listen_options(p: argparse.ArgumentParser, port: int, port_help: str) -> None:
    """``--host`` and ``--port`` of a service that listens (gRPC)."""
    g = p.add_argument_group("listening")
    g.add_argument("--host", default="127.0.0.1", help="address to bind")
    g.add_argument("--port", type=int, default=port, help=port_help)
    metrics_option(g)


def metrics_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--metrics-port``: where a service serves Prometheus /metrics, if anywhere."""
    p.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve Prometheus /metrics on this port (0: any free port; default: no /metrics)",
    )


def consumer_name(text: str) -> str:
    """A consumer name: it also names the process's Redis connections (CLIENT SETNAME), which
    take printable characters without spaces."""
    if not text or len(text) > 200 or any(not ("!" <= c <= "~") for c in text):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a consumer name is 1-200 printable ASCII characters without spaces"
        )
    return text


def consumer_options(
    p: argparse.ArgumentParser, stream: str, claim_idle_ms: int, claim_help: str
) -> None:
    """``--consumer`` and ``--claim-idle-ms`` of a consumer-group reader of ``stream``."""
    g = p.add_argument_group("consumer group")
    g.add_argument(
        "--consumer",
        type=consumer_name,
        default=f"{socket.gethostname()}-{os.getpid()}",
        help=f"this process's consumer name in the {stream} group (host-pid)",
    )
    g.add_argument("--claim-idle-ms", type=int, default=claim_idle_ms, help=claim_help)


def worker_options(
    p: argparse.ArgumentParser,
    stream: str,
    claim_idle_ms: int,
    claim_help: str,
    port: int | None = None,
    port_help: str = "",
) -> None:
    """What every worker takes (arena engine, arena bots, arena matchmaker): ``--redis-url``
    and ``--namespace``, ``--host`` and ``--port`` if it listens on ``port``, and the consumer
    group options of its reader of ``stream``."""
    redis_options(p)
    if port is not None:
        listen_options(p, port, port_help)
    consumer_options(p, stream, claim_idle_ms, claim_help)


def trim_option(p: argparse.ArgumentParser) -> None:
    """``--trim-ms``: how often this service trims the shared streams (services/redisinfra/trim.py)."""
    p.add_argument(
        "--trim-ms",
        type=int,
        default=1000,
        help="how often the shared streams are trimmed below what every consumer group acked "
        "and their lag and pending counts measured (0: never)",
    )


def game_options(
    p: argparse.ArgumentParser,
    *,
    players: int,
    games: int,
    seed_help: str = "game i is dealt with seed SEED + i",
    options: bool = True,
) -> None:
    """Which games to play: ``--ruleset``, ``--players``, ``--games``, ``--seed``, ``--options``."""
    g = p.add_argument_group("games")
    g.add_argument("--ruleset", default="standard", help="ruleset name")
    g.add_argument("--players", type=int, default=players, help="seats per game")
    g.add_argument("--games", type=int, default=games, help="how many games")
    g.add_argument("--seed", type=int, default=1, help=seed_help)
    if options:
        g.add_argument(
            "--options",
            type=json_object,
            default={},
            help="ruleset options as JSON, e.g. '{\"double_renegade\": true}'",
        )
