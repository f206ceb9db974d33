"""`arena bots`: answer the decisions of bot seats from arena:decisions, through GameService.

Several workers share the load as consumers of one group (`bots`) on every partition's
decisions stream (`{ns}:{TAG}:decisions`, services/contracts/streams.py). Each
message is handled by `answer.Answerer` (view catch-up, policy, SubmitAction) and acked after
it: a worker killed mid-message leaves it pending, and a live worker takes it over with
XAUTOCLAIM once it has been idle `--claim-idle-ms`; a message that keeps failing is parked in
`{ns}:dead` after `--max-deliveries`. Messages are handled concurrently (up to
`--max-inflight`), one at a time per seat.

Seat tokens: a bot worker holds no signing secret. The engine puts a short-lived token for the
decision's seat, and that seat only, in each decisions message (field `token`); the worker
answers and catches up with it. Only the engine writes that stream, and only for seats its
header marks as bots, so a bot worker can act for bot seats alone, never for a person's seat.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ..cliargs import address_list, metrics_option, worker_options
from ..contracts import tokens
from ..contracts.streams import DECISIONS, FIELD, BadMessage, BotDecision, decode, encode
from ..gctune import tune_gc
from ..lifecycle import run_main, started
from ..observability import Latency, mean_ms, serve
from ..redisinfra.liveness import SILENT_S, Liveness
from ..redisinfra.partitions import group_consumers
from ..redisinfra.reconnect import Outage, Voice, is_nogroup, is_outage
from ..redisinfra.redis_client import connect
from ..redisinfra.streams import DEAD_MAXLEN, FieldValue, GroupConsumer, Message
from ..targets import Targets
from .answer import Answerer, Poison, Taken
from .engine_client import GrpcEngine
from .engines import engines
from .heuristic import FALLBACKS
from .seats import CACHE_SIZE, SERVABLE, Minds

GROUP = DECISIONS.groups[0]


class Metrics:
    """Prometheus metrics of one bot worker (own registry)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.outcomes = Counter(
            "arena_bot_decisions",
            "decisions messages by outcome",
            ["outcome"],
            registry=self.registry,
        )
        self.latency = Latency(  # (a Histogram without a lock: observability.py)
            "arena_bot_answer_seconds",
            "message received to acked",
            (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0),
        )
        self.registry.register(self.latency)
        self.fallbacks = Counter(
            "arena_bot_policy_fallbacks",
            "answers replaced by the safe default (policy error, over budget, illegal pick)",
            ["reason"],
            registry=self.registry,
        )
        self._fallbacks_seen: dict[str, int] = {}
        self.worlds = Counter(
            "arena_bot_worlds_calls",
            "look-ahead's GameService.Determinize calls (hard seats) by result: dealt, refused",
            ["result"],
            registry=self.registry,
        )
        self._worlds_seen: dict[str, int] = {}
        self.unreadable = Counter(
            "arena_bot_unreadable_entries",
            "log entries a seat's fold could not read and stepped over (logged once a seat)",
            registry=self.registry,
        )
        self._unreadable_seen = 0
        self._outcomes: dict[str, Counter] = {}  # outcome -> its counter (labels() once)
        self.silent_engines: Callable[[], dict[str, float]] = dict
        self.registry.register(_SilentEngines(self))

    def outcome(self, name: str) -> Counter:
        """The counter of one outcome (the labelled child looked up once, not per message)."""
        child = self._outcomes.get(name)
        if child is None:
            child = self._outcomes[name] = self.outcomes.labels(outcome=name)
        return child

    def sync_counts(self, worlds: dict[str, int] | None = None, unreadable: int = 0) -> None:
        """Carry the policies' fallback counts (heuristic.FALLBACKS), the answerer's
        Determinize calls and its unreadable entries into their metrics."""
        if unreadable > self._unreadable_seen:
            self.unreadable.inc(unreadable - self._unreadable_seen)
            self._unreadable_seen = unreadable
        for counts, seen, metric in (
            (FALLBACKS, self._fallbacks_seen, self.fallbacks),
            (worlds or {}, self._worlds_seen, self.worlds),
        ):
            for label, n in counts.items():
                if n > seen.get(label, 0):
                    metric.labels(label).inc(n - seen.get(label, 0))
                    seen[label] = n


class _SilentEngines(Collector):
    """`arena_bot_engine_silent_seconds{engine}`: each engine this worker hears nothing from
    (hung, stopped: its games go to the others), read when scraped."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """One sample per silent engine."""
        family = GaugeMetricFamily(
            "arena_bot_engine_silent_seconds",
            "seconds an engine has sent nothing on its bot session (not even a heartbeat): "
            "its games' answers go to the other engines meanwhile",
            labels=["engine"],
        )
        for engine, seconds in self.metrics.silent_engines().items():
            family.add_metric([engine], round(seconds, 1))
        yield family


def _decision(msg: Message) -> BotDecision:
    try:
        return decode(msg.fields, BotDecision)
    except BadMessage as exc:
        raise Poison(str(exc)) from None


def _pushed_decision(data: bytes) -> BotDecision:
    return _decision(Message("session", "", {FIELD: data}))


class BotWorker:
    """The consume loop: stale messages first (now and then), else new ones; bounded fan-out.

    With several consumers (one per partition of the decisions stream) each gets its own loop;
    the bound on messages in hand is shared."""

    def __init__(
        self,
        consumer: GroupConsumer | list[GroupConsumer],
        answerer: Answerer,
        *,
        max_inflight: int = 32,
        read_count: int = 32,
        claim_every_s: float = 1.0,
        metrics: Metrics | None = None,
    ) -> None:
        self.consumers = consumer if isinstance(consumer, list) else [consumer]
        self.consumer, self.answerer = self.consumers[0], answerer
        self.max_inflight = max_inflight
        self.read_count = read_count
        self.claim_every_s = claim_every_s
        self.metrics = metrics or Metrics()
        self.outcomes: dict[str, int] = {}
        self.inflight: set[asyncio.Task[bool]] = set()
        # pushed decisions waiting for room (decoded, or the bytes of one that does not decode)
        self.backlog: deque[BotDecision | bytes] = deque()
        self.quick: set[asyncio.Task[None]] = set()  # batches of answers taken at once

    def _count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        self.metrics.outcome(outcome).inc()

    def _consumer_of(self, msg: Message) -> GroupConsumer:
        return next((c for c in self.consumers if c.stream == msg.stream), self.consumer)

    async def on_message(self, msg: Message) -> None:
        """Handle one message; Poison is dead-lettered, other failures leave it pending."""
        await self._handle(
            lambda: _decision(msg), lambda why: self._consumer_of(msg).dead_letter(msg, why)
        )

    async def _handle(
        self, decision: Callable[[], BotDecision], dead: Callable[[str], Awaitable[None]]
    ) -> None:
        start = time.perf_counter()
        try:
            outcome = await self.answerer.handle(decision())
        except Poison as exc:
            await dead(str(exc))
            outcome = "poison"
        except Exception:
            self._count("retry")
            raise
        self._count(outcome)
        self.metrics.sync_counts(self.answerer.worlds, self.answerer.unreadable)
        self.metrics.latency.observe(time.perf_counter() - start)

    async def pushed(self, engine: int, batch: list[tuple[bytes, BotDecision | None]]) -> None:
        """The decisions an engine pushed in one bot session message (engine_client.py).

        Those a seat answers without its view (random) are answered together, at once: the
        policy for each, then one submit for all of them (`Answerer.take`, `submit_taken`), in
        one task, not one per decision. Every other one is handled as a stream message is, in
        its own task, at once if there is room, else as soon as there is (queued meanwhile: the
        session must read on, its results free the room; the queue is bounded by the games,
        each has one pending decision). Nothing to ack: unanswered, a decision has the engine
        publish it to the stream (services/engine/bot_sessions.py)."""
        decoded = [m for _, m in batch if m is not None]
        taken, outcomes, rest = self.answerer.take(decoded) if decoded else ([], [], [])
        self.backlog.extend(rest)
        self.backlog.extend(data for data, m in batch if m is None)
        self._start_pushed()
        for outcome in outcomes:
            self._count(outcome)
        if taken:
            task = asyncio.create_task(self._submit_taken(taken))
            self.quick.add(task)
            task.add_done_callback(self.quick.discard)

    async def _submit_taken(self, taken: list[Taken]) -> None:
        start = time.perf_counter()
        try:
            outcomes, again = await self.answerer.submit_taken(taken)
        except Exception:  # noqa: BLE001 - counted; the engine's deadline reposts them
            self.outcomes["retry"] = self.outcomes.get("retry", 0) + len(taken)
            self.metrics.outcome("retry").inc(len(taken))
            return
        seconds = time.perf_counter() - start
        counts: dict[str, int] = {}
        for outcome in outcomes:
            counts[outcome] = counts.get(outcome, 0) + 1
        for outcome, n in counts.items():  # (a counter's lock taken once a batch, not per answer)
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + n
            self.metrics.outcome(outcome).inc(n)
        self.metrics.latency.observe(seconds, len(outcomes))
        if again:  # refused or failed: the one-at-a-time way says why, or tries again
            self.backlog.extend(again)
            self._start_pushed()

    def _start_pushed(self, _: object = None) -> None:
        while self.backlog and len(self.inflight) < self.max_inflight:
            task = asyncio.create_task(self._pushed(self.backlog.popleft()))
            self.inflight.add(task)
            task.add_done_callback(self._landed)

    def _landed(self, task: asyncio.Task[bool]) -> None:
        """A message handled (or failed): its room goes to a pushed decision waiting for one."""
        self.inflight.discard(task)
        self._start_pushed()

    async def _pushed(self, pushed: BotDecision | bytes) -> bool:
        def decision() -> BotDecision:  # (decoded once, by the session: engine_client.py)
            return _pushed_decision(pushed) if isinstance(pushed, bytes) else pushed

        async def park(why: str) -> None:
            await self._park(pushed if isinstance(pushed, bytes) else encode(pushed)[FIELD], why)

        try:
            await self._handle(decision, park)
        except Exception:  # noqa: BLE001 - counted; the engine's deadline reposts it
            return False
        return True

    async def _park(self, data: bytes, reason: str) -> None:
        """A pushed decision that can never be answered, to the dead letters (with the reason)."""
        fields: dict[FieldValue, FieldValue] = {"stream": "bot-session", "reason": reason}
        fields[b"msg." + FIELD] = data
        await self.consumer.client.xadd(
            self.consumer.dead_stream, fields, maxlen=DEAD_MAXLEN, approximate=True
        )

    async def run(self, stop: asyncio.Event, block_ms: int = 2000) -> None:
        """Consume until `stop` is set, then let the messages in hand finish.

        A quiet partition's read blocks up to `block_ms` (claims are looked at between reads):
        with the decisions coming on bot sessions every partition is quiet, and a read a
        partition each half second was most of an idle worker's CPU. `stop` ends a blocked read
        at once (a read cut short leaves what it took pending: this worker reads it again when
        it starts, another one claims it)."""
        voice = Voice(f"arena bots {self.consumer.consumer} ({len(self.consumers)} partitions)")
        loops = [
            asyncio.ensure_future(self._loop(c, stop, block_ms, voice)) for c in self.consumers
        ]
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait([*loops, stopped], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            for loop in loops:
                loop.cancel()
            ended = await asyncio.gather(*loops, return_exceptions=True)
        for end in ended:
            if isinstance(end, Exception):
                raise end  # (a loop outlives every error of a round: this is a bug)
        await self.settle(timeout=5)

    async def _loop(
        self, consumer: GroupConsumer, stop: asyncio.Event, block_ms: int, voice: Voice
    ) -> None:
        loop = asyncio.get_running_loop()
        next_claim = 0.0
        outage = Outage(f"arena bots {consumer.consumer} {consumer.stream}", voice=voice)
        started = False
        while not stop.is_set():
            if len(self.inflight) >= self.max_inflight:  # (the timeout: `stop` is looked at)
                await asyncio.wait(self.inflight, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
                continue
            claim = loop.time() >= next_claim
            try:
                if not started:  # again after Redis came back without the group
                    await consumer.start()
                    started = True
                more_stale = await self.poll(block_ms, claim, consumer)
            except Exception as exc:  # noqa: BLE001 - the loop must outlive any one bad round
                if is_nogroup(exc):
                    started = False
                elif is_outage(exc):  # Redis restarting, a cluster failing over: back off
                    await outage.failed(exc, stop)
                else:
                    print(f"arena bots {consumer.consumer}: {exc!r}", file=sys.stderr)
                    await asyncio.sleep(0.5)
                continue
            outage.ok()
            if claim and not more_stale:
                next_claim = loop.time() + self.claim_every_s

    async def poll(self, block_ms: int, claim: bool, consumer: GroupConsumer | None = None) -> bool:
        """One round: stale messages (if `claim`), else new ones; each handled in its own task.

        Returns whether the claim filled the room (more may be stale: claim again next round).
        """
        # small reads: acting on one while the engine handles the last keeps both busy
        consumer = consumer or self.consumer
        room = min(self.max_inflight - len(self.inflight), self.read_count)
        if room <= 0:
            return False
        # our own pending list (after a restart under the same name) only with nothing in
        # flight, or it would hold those too; else the engine posts an unanswered decision
        # again, and claims take over the rest
        msgs = [] if self.inflight else await consumer.retry_own(room)
        if not msgs and claim:
            msgs = await consumer.claim_stale(room)
        full = len(msgs) >= room
        if not msgs:
            msgs = await consumer.read_new(room, block_ms)
        for m in msgs:
            task = asyncio.create_task(consumer.handle(m, self.on_message))
            self.inflight.add(task)
            task.add_done_callback(self._landed)
        return full

    async def settle(self, timeout: float | None = None) -> None:
        """Wait for the messages in hand (handled, and acked or left pending)."""
        if self.inflight or self.quick:
            await asyncio.wait([*self.inflight, *self.quick], timeout=timeout)


async def run(args: argparse.Namespace) -> None:
    """Run one bot worker until SIGTERM/SIGINT."""
    # named in CLIENT LIST: an operator (and the chaos test) sees which worker polls
    client = connect(args.redis_url, client_name=f"arena-bots:{args.consumer}")
    # a name stands for every engine it resolves to (engines.py); the people's engines get a
    # session too, and the bot seats of people's games (engine_client.py)
    people = args.people_engine or []
    targets = Targets([*args.engine, *people])
    engine = await engines(
        targets.entries,
        lambda current: GrpcEngine(
            current,
            args.timeout_ms / 1000,
            name=args.consumer,
            silent_s=args.engine_silent_ms / 1000,
            people=targets.of(people),
        ),
        name=args.consumer,
        targets=targets,
    )
    answerer = Answerer(
        engine,
        Minds(args.policy, args.cache_size),
        think_ms=args.think_ms,
    )
    consumers = group_consumers(
        client,
        args.namespace,
        DECISIONS,
        args.consumer,
        group=GROUP,
        min_idle_ms=args.claim_idle_ms,
        max_deliveries=args.max_deliveries,
    )
    worker = BotWorker(
        consumers,
        answerer,
        max_inflight=args.max_inflight,
        claim_every_s=min(1.0, args.claim_idle_ms / 2000),
    )
    worker.metrics.silent_engines = engine.silent
    if args.metrics_port is not None:
        serve(args.metrics_port, worker.metrics.registry, args.host)
    tune_gc()
    stop = await started(client, args.namespace, f"arena bots {args.consumer}")
    for consumer in consumers:
        await consumer.start()
    print(json.dumps({"consumer": args.consumer, "policy": args.policy}), flush=True)
    key_name = tokens.bot_key_name(args.namespace)

    async def bot_key() -> str | None:
        value = await client.get(key_name)
        return value.decode() if isinstance(value, bytes) else value

    sessions = asyncio.create_task(engine.run(worker.pushed if args.sessions else None, bot_key))
    # its heartbeat in Redis: the engines report a bot worker that stops beating (hung, dead)
    beats = asyncio.create_task(
        Liveness(client, args.namespace, f"bots:{args.consumer}", watch=False).run(stop)
    )
    crashed = False
    try:
        await worker.run(stop)
    except Exception as exc:
        crashed = True
        print(f"arena bots {args.consumer}: stopped by {exc!r}", file=sys.stderr, flush=True)
        raise
    finally:
        sessions.cancel()
        if not stop.is_set():  # (a crash: the heartbeat stops with the process)
            beats.cancel()
        await asyncio.gather(beats, return_exceptions=True)
        session_answers, session_messages = engine.session_counts()
        submitted, submit_calls = engine.submitted()
        print(
            json.dumps(
                {
                    "consumer": args.consumer,
                    "outcomes": worker.outcomes,
                    "worlds": answerer.worlds,  # look-ahead's Determinize calls (hard seats)
                    "batched": {
                        "answers": submitted,
                        "submit_calls": submit_calls,
                        "acks": sum(c.acks.items for c in consumers),
                        "xack_calls": sum(c.acks.batches for c in consumers),
                        "pushed": engine.pushed,
                        "session_answers": session_answers,
                        "session_messages": session_messages,
                    },
                    "answer_ms_mean": mean_ms(worker.metrics.latency),
                }
            ),
            flush=True,
        )
        if crashed:  # answers in flight may never cancel cleanly: exit now and be restarted
            os._exit(1)  # (what was not acknowledged is delivered again)
        await engine.close()
        await client.aclose()


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bots` options."""
    p.description = "Run one bot worker: answer bot seats' decisions from arena:decisions."
    p.add_argument(
        "--policy",
        choices=SERVABLE,
        default="heuristic",
        help="for seats whose player id does not name one (bot:NAME)",
    )
    p.add_argument(
        "--engine",
        type=address_list,
        default=os.environ.get("ARENA_ENGINE", "127.0.0.1:50051"),
        help="GameService address(es), comma-separated ($ARENA_ENGINE if set); a DNS name "
        "stands for every address it resolves to (one engine each), resolved again every 30 s",
    )
    p.add_argument(
        "--people-engine",
        type=address_list,
        default=None,
        metavar="HOST:PORT[,HOST:PORT...]",
        help="people's engines (arena engine --role people), given to the web server too: the "
        "bot seats of games with a person seated are answered there, the bot-only games' on "
        "--engine (each falls over to the other when its own are down); default: none, every "
        "game on --engine",
    )
    worker_options(
        p, "arena:decisions", 10_000, "take over messages pending this long (their worker died)"
    )
    p.add_argument("--max-deliveries", type=int, default=5, help="then dead-letter")
    p.add_argument(
        "--max-inflight",
        type=int,
        default=512,
        help="decisions handled at once (their answers share SubmitActions calls)",
    )
    p.add_argument(
        "--sessions",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="take decisions pushed on a BotSession stream from each engine too (else only "
        "from arena:decisions)",
    )
    p.add_argument("--timeout-ms", type=int, default=5_000, help="per gRPC call")
    p.add_argument(
        "--engine-silent-ms",
        type=int,
        default=int(SILENT_S * 1000),
        help="an engine that sent nothing on its bot session (not even its heartbeat, every "
        "second) this long is taken as hung: its games go to the other engines until it "
        "speaks again",
    )
    p.add_argument(
        "--cache-size",
        type=int,
        default=CACHE_SIZE,
        help="bot seats kept in memory (keep it above the bot seats in flight)",
    )
    p.add_argument(
        "--think-ms",
        type=int,
        default=0,
        help="pause this long before each answer (a pace people can watch and play against)",
    )
    metrics_option(p)
    p.add_argument("--host", default="127.0.0.1", help="address /metrics binds")


def main(args: argparse.Namespace) -> int:
    """Run the worker until SIGTERM/SIGINT."""
    return run_main("arena bots", run(args))
