"""`arena bench service`: the engine worker's own Python per decision, without the transport.

`arena bench e2e` gives the engine worker's CPU per decision through the whole platform (gRPC,
Redis, a bot worker process), where it is hard to tell the service layer's cost from the
transport's and where py-spy misreads asyncio stacks. This bench drives the same code an
engine worker runs for random bots, in one process: `Games` (create, answers, appends, bot
decisions, finishing and archiving to files) under `GameServicer.BotSession`, the stream the
bot workers use, called directly (the request and response messages are built and serialized
as gRPC would, but nothing is sent). Its bot answers every pushed decision with the seeded
random policy, as a random bot worker does; the CPU it spends doing so (decoding the message,
the policy, building the answer) is timed apart and taken off (`driver_cpu_us_per_decision`).

Collector: `--gc worker` (the default) sets it as an engine worker does (services/gctune.py),
`--gc default` leaves CPython's thresholds; the CPU spent collecting is reported either way
(`gc_cpu_us_per_decision`, from gc.callbacks, inside the service's figure).

Store: `memory` (InMemoryEventStore and MemorySide: the service layer alone) or `redis` (a
throw-away redis-server, or --redis-url: the engine's Redis client and append script too; the
server's CPU from INFO is reported apart).

Beside it, interleaved round by round, the rules peer: the same seeded games played by the
rules engine and the policy in one loop, as `arena bench e2e` plays them in-process. The
report gives CPU per decision of both and of the service layer over the rules
(`service_minus_rules_cpu_us`), wall rates, and the load average (services/bench/kit.py).

`--profile FILE`: one more run of the service under cProfile (deterministic, so asyncio stacks
are attributed right; timed in process CPU time, not wall), written to FILE (pstats) and its top functions printed to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import io
import itertools
import os
import pstats
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..bots.random_policy import RandomPolicy
from ..cliargs import bench_options, game_options
from ..contracts import tokens
from ..contracts.streams import BotDecision, NewMatch, Seat
from ..engine.grpc_server import MAX_BATCH, GameServicer
from ..engine.service import Games
from ..engine.side import MemorySide, RedisSide
from ..eventlog.archive import SUFFIX
from ..eventlog.memory import InMemoryEventStore
from ..eventlog.redis_store import RedisEventStore
from ..gctune import tune_gc
from ..proto_gen.arena.v1 import game_pb2
from ..redisinfra.redis_client import connect
from ..redisinfra.server import redis_or_throwaway
from ..rules import api
from . import kit
from .engine import random_games
from .kit import Sample

SECRET = b"arena bench service"
PLAYER = "bot:random"
_BOT_DECISION = msgspec.msgpack.Decoder(BotDecision)
_DECISION = msgspec.json.Decoder(api.Decision)
_RUNS = itertools.count()
Through = Callable[
    [Callable[[game_pb2.BotSessionResponse], game_pb2.BotSessionRequest | None], Any],
    game_pb2.BotSessionRequest | None,
]


class _Context:
    """What `BotSession` reads of a grpc.aio servicer context: the call's metadata."""

    def __init__(self, key: str) -> None:
        self.metadata = ((tokens.BOT_KEY_HEADER, key),)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    async def abort(self, code: Any, details: str) -> None:
        raise RuntimeError(f"session refused: {details}")


class _Bot:
    """The random bot worker's part, in this process: answers pushed decisions; counts the CPU
    it spends (taken off the service's)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.policies: dict[tuple[str, int], RandomPolicy] = {}
        self.seeds: dict[str, int] = {}
        self.cpu_s = 0.0
        self.answered = 0
        self.refused: list[str] = []

    def answers(self, out: game_pb2.BotSessionResponse) -> game_pb2.BotSessionRequest | None:
        """The answers to a session message's decisions (None if it carries none); checks its
        results."""
        c0 = time.thread_time()  # (not the archive's thread: that is the service's work)
        # the bytes a worker would receive: the servicer's message, serialized and parsed
        out = game_pb2.BotSessionResponse.FromString(out.SerializeToString())
        for r in out.results:
            if r.result.code != 0:
                self.refused.append(r.result.reason)
            else:
                self.answered += 1
        batch: list[game_pb2.BotAnswer] = []
        for data in out.decisions:
            m = _BOT_DECISION.decode(data)
            d = _DECISION.decode(m.body)
            key = (m.game, m.seat)
            policy = self.policies.get(key)
            if policy is None:
                policy = self.policies[key] = RandomPolicy(self.seeds[m.game] * 1000 + m.seat)
            a = policy.act(d)
            # no seat token: a decision pushed on the session (as the bot worker answers them)
            action = game_pb2.SubmitActionRequest(
                game_id=m.game, decision_id=m.decision, picks=a.picks
            )
            batch.append(game_pb2.BotAnswer(tag=len(batch), action=action))
        request = game_pb2.BotSessionRequest(answers=batch) if batch else None
        if request is not None:
            request = game_pb2.BotSessionRequest.FromString(request.SerializeToString())
        self.cpu_s += time.thread_time() - c0
        return request


@contextlib.asynccontextmanager
async def _stores(kind: str, url: str | None) -> AsyncIterator[tuple[Any, Any, Any]]:
    """(store, side, Redis client or None) for one run."""
    if kind == "memory":
        yield InMemoryEventStore(), MemorySide(), None
        return
    assert url is not None
    client = connect(url)
    # a namespace of its own (a --redis-url may hold real games), and its keys dropped after
    namespace = f"bench-service-{os.getpid()}-{next(_RUNS)}"
    try:
        yield RedisEventStore(client, namespace), RedisSide(client, namespace), client
    finally:
        keys = [k async for k in client.scan_iter(match=f"{namespace}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def _service_once(
    ruleset: str,
    players: int,
    games: int,
    seed: int,
    kind: str,
    url: str | None,
    folder: Path,
    through: Through | None = None,
) -> tuple[int, float, float]:
    """Play the games through the service, archiving them to `folder`; (decisions, bot CPU s,
    Redis server CPU s). With `through`, the bot's work is handed to it (`arena bench
    callgrind` runs it in a thread of its own, so that its instructions are counted apart)."""
    async with _stores(kind, url) as (store, side, client):
        g = Games(store, side, SECRET, archive_dir=folder)
        servicer = GameServicer(g)
        bot = _Bot(seed)
        requests: asyncio.Queue[game_pb2.BotSessionRequest | None] = asyncio.Queue()

        async def incoming() -> AsyncIterator[game_pb2.BotSessionRequest]:
            while (r := await requests.get()) is not None:
                yield r

        stream = servicer.BotSession(incoming(), _Context(g.bot_key))
        assert isinstance(stream, AsyncGenerator)
        first = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0)  # the session is open before any game starts
        redis0 = await kit.redis_cpu_seconds(client) if client is not None else 0.0
        for i in range(games):
            bot.seeds[f"s-{i}"] = seed + i
            match = NewMatch(
                match_id=f"s-{i}",
                ruleset=ruleset,
                seats=[Seat(PLAYER, True)] * players,
                seed=seed + i,
            )
            await g.create_game(match)
        in_flight = 0
        out: game_pb2.BotSessionResponse | None = await first
        while out is not None:
            in_flight -= len(out.results)
            request = bot.answers(out) if through is None else through(bot.answers, out)
            if bot.refused:  # (its game would wait for an answer forever)
                raise RuntimeError(f"{len(bot.refused)} answers refused: {bot.refused[0]}")
            if request is not None:
                in_flight += len(request.answers)
                # a worker sends at most MAX_BATCH answers a message (the engine refuses more:
                # the first message of 1,000 games carries 1,000 decisions)
                if len(request.answers) <= MAX_BATCH:
                    await requests.put(request)
                else:
                    for k in range(0, len(request.answers), MAX_BATCH):
                        part = request.answers[k : k + MAX_BATCH]
                        await requests.put(game_pb2.BotSessionRequest(answers=part))
            if in_flight == 0 and not g.sessions.outstanding:
                break
            out = await anext(stream)
        await requests.put(None)
        await stream.aclose()
        redis = await kit.redis_cpu_seconds(client) - redis0 if client else 0.0
        if bot.refused:
            raise RuntimeError(f"{len(bot.refused)} answers refused: {bot.refused[0]}")
        return bot.answered, bot.cpu_s, redis


def archived(folder: Path, games: int) -> None:
    """Every game of a run is in its archive folder (checked after the timing)."""
    finished = len(list(folder.glob(f"s-*{SUFFIX}")))
    if finished != games:
        raise RuntimeError(f"{finished} of {games} games archived")


@contextlib.contextmanager
def collector(mode: str) -> Iterator[list[float]]:
    """The collector as an engine worker sets it (`worker`: gctune.tune_gc) or CPython's
    default (`default`) for a run; yields [CPU seconds spent collecting so far]."""
    spent, start = [0.0], [0.0]

    def timing(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            start[0] = time.process_time()
        else:
            spent[0] += time.process_time() - start[0]

    old = gc.get_threshold()
    if mode == "worker":
        tune_gc()
    gc.callbacks.append(timing)
    try:
        yield spent
    finally:
        gc.callbacks.remove(timing)
        gc.set_threshold(*old)
        gc.unfreeze()


def _timed_service(
    ruleset: str, players: int, games: int, seed: int, kind: str, url: str | None, gc_mode: str
) -> tuple[Sample, Sample, float, float]:
    """(the service with the bot taken off, the bot alone, Redis server CPU s, GC CPU s)."""
    with (
        tempfile.TemporaryDirectory(prefix="arena-bench-service-") as tmp,
        collector(gc_mode) as collecting,
    ):
        c0, t0 = kit.cpu_seconds(), time.perf_counter()
        decisions, bot_s, redis_s = asyncio.run(
            _service_once(ruleset, players, games, seed, kind, url, Path(tmp))
        )
        wall, cpu = time.perf_counter() - t0, kit.cpu_seconds() - c0
        archived(Path(tmp), games)
    service, bot = Sample(decisions, wall, cpu - bot_s), Sample(decisions, wall, bot_s)
    return service, bot, redis_s, collecting[0]


@contextlib.contextmanager
def _redis(kind: str, url: str | None) -> Iterator[str | None]:
    if kind == "memory":
        yield None
        return
    with redis_or_throwaway(url) as where:
        yield where


def bench_service(
    ruleset: str = "standard",
    players: int = 5,
    games: int = 200,
    seed: int = 1,
    repeat: int = 2,
    store: str = "memory",
    redis_url: str | None = None,
    profile: str | None = None,
    gc_mode: str = "worker",
) -> dict[str, Any]:
    """The whole benchmark as JSON-ready data (see the module docstring)."""
    env = kit.Envelope("service")
    rules: list[Sample] = []
    service: list[Sample] = []
    bots: list[Sample] = []
    redis: list[float] = []
    collecting: list[float] = []
    with _redis(store, redis_url) as url:
        for _ in range(repeat):  # interleaved: rules, service, rules, service, ...
            rules.append(kit.timed(lambda: random_games(ruleset, players, games, seed)))
            s, b, r, c = _timed_service(ruleset, players, games, seed, store, url, gc_mode)
            service.append(s)
            bots.append(b)
            redis.append(r)
            collecting.append(c)
        if profile:
            prof = cProfile.Profile(time.process_time)  # CPU, not wall: the machine is shared
            with collector(gc_mode), tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
                prof.enable()
                asyncio.run(_service_once(ruleset, players, games, seed, store, url, Path(tmp)))
                prof.disable()
            prof.dump_stats(profile)
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(40)
            print(text.getvalue(), file=sys.stderr)
    per = [s.cpu_us_per_unit for s in service]
    out: dict[str, Any] = {
        "ruleset": ruleset,
        "players": players,
        "games": games,
        "seed": seed,
        "store": store,
        "gc": gc_mode,
        "rules": kit.summary(rules, "decisions"),
        "service": kit.summary(service, "decisions"),
        "driver_cpu_us_per_decision": kit.spread([b.cpu_us_per_unit for b in bots], 2),
        "gc_cpu_us_per_decision": kit.spread(
            [c * 1e6 / max(s.units, 1) for c, s in zip(collecting, service, strict=True)], 2
        ),
        "service_minus_rules_cpu_us": kit.spread(
            [s - r.cpu_us_per_unit for s, r in zip(per, rules, strict=True)], 2
        ),
        "service_vs_rules": kit.ratio(service, rules),
    }
    if store == "redis":
        out["redis_cpu_us_per_decision"] = kit.spread(
            [r * 1e6 / max(s.units, 1) for r, s in zip(redis, service, strict=True)], 2
        )
    return env.wrap(out)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench service` options."""
    p.description = (
        "The engine worker's service layer in one process (Games under the BotSession "
        "servicer, no transport) with random bots, beside the rules engine alone; JSON out."
    )
    game_options(p, players=5, games=200, options=False)
    p.add_argument("--repeat", type=int, default=2, help="interleaved rounds")
    p.add_argument(
        "--store",
        choices=("memory", "redis"),
        default="memory",
        help="memory: the service layer alone; redis: with the Redis client and script",
    )
    p.add_argument(
        "--gc",
        choices=("worker", "default"),
        default="worker",
        help="the collector's thresholds: as an engine worker sets them, or CPython's default",
    )
    p.add_argument(
        "--profile",
        default=None,
        metavar="FILE",
        help="also one run under cProfile, to FILE (default: none)",
    )
    bench_options(p)


def main(args: argparse.Namespace) -> int:
    """`arena bench service`: print the JSON report."""
    bad = args.games < 1 or args.repeat < 1
    return kit.report(
        "service",
        lambda: bench_service(
            args.ruleset,
            args.players,
            args.games,
            args.seed,
            args.repeat,
            args.store,
            args.redis_url,
            args.profile,
            args.gc,
        ),
        "--games and --repeat must be at least 1" if bad else "",
    )
