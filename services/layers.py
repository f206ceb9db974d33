"""The parts of Arena and what each may import: written down once, here, and nowhere else.

Every module under ``services/`` belongs to one part: the one whose module names it, itself or
as a prefix (the longest wins; the root package ``services`` names only itself). A part
may import its own modules and those of the parts in its ``uses``; every other import is a
broken rule: "engine never imports replay". ``tests/test_layers.py`` reads this table and checks
every import of every module against it (module-level, function-local and TYPE_CHECKING imports,
relative ones resolved, and module names given to a call such as
``importlib.import_module("services.rules.api")`` or the CLI's ``Command(..., "services.x")``),
and lists each broken rule it finds; the known ones are listed there as debts to pay off.

Read bottom to top: the rules know nothing of the rest; the Redis infrastructure (client,
work streams, trimming, reconnecting, the redis-server launcher) knows no game; the store (the
event log) knows no rules, verifying a log against them sits just above it; the read side
is what every viewer receives, the services talk to each other over gRPC and Redis streams
(never by importing each other), the platform starts them as processes, the benchmarks measure
them from outside and the ``arena`` command sits on top of everything.
"""

from __future__ import annotations

from dataclasses import dataclass

ROOT = "services"


@dataclass(frozen=True)
class Part:
    """One part: its modules (dotted prefixes), what it is, and the parts it may import."""

    name: str
    modules: tuple[str, ...]
    what: str
    uses: tuple[str, ...] = ()
    facade: tuple[str, ...] = ()  # if any: the only modules other parts may import


SERVICES_AND_BELOW = (
    "rules",
    "contracts",
    "redisinfra",
    "common",
    "eventlog",
    "verify",
    "readside",
    "engine",
    "bots",
    "matchmaking",
    "replay",
    "tournaments",
    "play",
    "webserver",
    "platform",
)

PARTS: tuple[Part, ...] = (
    Part(
        "rules",
        ("services.rules",),
        "the pure rules engine: no I/O, no clock, no global random state",
        facade=("services.rules.api", "services.rules.scenario"),
    ),
    Part(
        "contracts",
        ("services.contracts", "services.proto_gen"),
        "what processes agree on: gRPC stubs, stream keys and messages, tokens, decision ids",
        uses=("rules",),  # the event schema is generated from the rules' event types
    ),
    Part(
        "redisinfra",
        ("services.redisinfra",),
        "the Redis infrastructure: the client, work streams with consumer groups, trimming, "
        "reconnecting, batching, liveness, the redis-server launcher, migrate",
        uses=("contracts",),  # the key layout and the stream messages
    ),
    Part(
        "common",
        (
            ROOT,  # the package's __init__ (process-wide switches), not what is under it
            "services.cliargs",
            "services.errors",
            "services.gctune",
            "services.layers",
            "services.lifecycle",
            "services.observability",
            "services.ports",
            "services.running",
            "services.rpc_guard",
            "services.targets",
        ),
        "small helpers every process shares: options, refusals, ports, metrics, GC settings",
        uses=("contracts", "redisinfra"),  # a refusal for an outage; finding the running Redis
    ),
    Part(
        "eventlog",
        ("services.eventlog",),
        "the event log: per-game hash-chained logs (entries, records, the store and its "
        "adapters), archive files, the catalog, signing",
        uses=("contracts", "common", "redisinfra"),
    ),
    Part(
        "verify",
        ("services.verify",),
        "a log verified end to end (the seed, a re-run through the rules, the reveal), games "
        "recorded by driving the rules, and the arena commands over stored logs: the event "
        "log's part that needs the rules, so the store itself knows none",
        uses=("rules", "contracts", "redisinfra", "common", "eventlog"),
    ),
    Part(
        "readside",
        ("services.readside",),
        "what every viewer receives: entry policy, positions, delay, envelope, a seat's fold",
        uses=("rules", "contracts", "redisinfra", "common", "eventlog"),
    ),
    Part(
        "engine",
        ("services.engine",),
        "the engine worker: GameService, matches consumer, deadlines, archiving",
        uses=("rules", "contracts", "redisinfra", "common", "eventlog", "readside"),
    ),
    Part(
        "bots",
        ("services.bots",),
        "bot policies, in-process self-play, the bot worker, recorded random-bot games",
        uses=("rules", "contracts", "redisinfra", "common", "eventlog", "verify", "readside"),
    ),
    Part(
        "matchmaking",
        ("services.matchmaking",),
        "tickets, tables, bot backfill, ratings",
        uses=("rules", "contracts", "redisinfra", "common", "eventlog"),
    ),
    Part(
        "replay",
        ("services.replay",),
        "the web server: lobby, live spectating and replays over HTTP/SSE and gRPC",
        uses=("rules", "contracts", "redisinfra", "common", "eventlog", "verify", "readside"),
    ),
    Part(
        "tournaments",
        ("services.tournaments",),
        "tournaments: specs, journals, the loop that plays one through a running platform, "
        "standings (hosted by arena tournament and by the web server)",
        uses=(
            "rules",
            "contracts",
            "redisinfra",
            "common",
            "eventlog",
            "readside",
            "bots",
            "matchmaking",
        ),
    ),
    Part(
        "play",
        ("services.play",),
        "people and bots at tables, tournaments in the browser: the HTTP API mounted on the "
        "replay server, a client of the others",
        uses=(
            "rules",
            "contracts",
            "redisinfra",
            "common",
            "eventlog",
            "readside",
            "replay",
            "matchmaking",
            "tournaments",
        ),
    ),
    Part(
        "webserver",
        ("services.webserver",),
        "the web server process (arena replay-server): the replay server with the play API, "
        "the Bot API and tournaments mounted beside it",
        uses=(
            "rules",
            "contracts",
            "redisinfra",
            "common",
            "eventlog",
            "verify",
            "readside",
            "replay",
            "matchmaking",
            "tournaments",
            "play",
        ),
    ),
    Part(
        "platform",
        ("services.platform",),
        "arena up and arena tournament: the services as supervised processes",
        uses=(
            "rules",
            "contracts",
            "redisinfra",
            "common",
            "eventlog",
            "readside",
            "bots",
            "matchmaking",
            "tournaments",
        ),
    ),
    Part(
        "bench",
        ("services.bench",),
        "the benchmarks (arena bench ...): any part, measured from outside",
        uses=SERVICES_AND_BELOW,
    ),
    Part(
        "cli",
        ("services.cli",),
        "the arena command: one entry per sub-command, each naming the module that runs it",
        uses=(*SERVICES_AND_BELOW, "bench"),
    ),
)


def part_of(module: str) -> Part | None:
    """The part a dotted module name belongs to: the one with the longest matching prefix."""
    best: tuple[int, Part] | None = None
    for part in PARTS:
        for prefix in part.modules:
            inside = module.startswith(prefix + ".") and prefix != ROOT
            if (module == prefix or inside) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), part)
    return best[1] if best else None
