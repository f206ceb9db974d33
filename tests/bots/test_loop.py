"""The bot worker's consume loop on a real Redis, with a stand-in for the answering logic:
poison is dead-lettered at once, a transient failure stays pending and is claimed again, and a
message that always fails is dead-lettered after `max_deliveries`.

The test steps the loop one round at a time and claims only when nothing is in hand (idle
threshold 0), so each claim takes exactly the messages left pending: delivery counts do not
depend on how fast the machine runs the handlers (a wall-clock idle threshold let a slow
round's messages be claimed twice).
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from services.bots.answer import Poison
from services.bots.engine_client import EngineError
from services.bots.worker import GROUP, BotWorker
from services.contracts.streams import DECISIONS, FIELD, BotDecision, decode, game_stream_key
from services.redisinfra.streams import GroupConsumer, publish_message


class Stub:
    """Answers by the message's kind (its `player` field)."""

    def __init__(self) -> None:
        self.flaky_failures = 2
        self.calls: dict[str, int] = {}
        self.worlds: dict[str, int] = {}  # an Answerer's Determinize counts (none here)
        self.unreadable = 0  # and its unreadable entries

    async def handle(self, msg: BotDecision) -> str:
        kind = msg.player
        self.calls[kind] = self.calls.get(kind, 0) + 1
        if kind == "poison":
            raise Poison("cannot ever work")
        if kind == "broken" or (kind == "flaky" and self.flaky_failures > 0):
            self.flaky_failures -= kind == "flaky"
            raise EngineError("UNAVAILABLE", "engine down")
        return "answered"


async def test_poison_transient_and_broken(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    ns = redis_namespace
    stream = game_stream_key(ns, DECISIONS.name, "g")  # every message is of game g
    for kind in ("ok", "poison", "flaky", "broken"):
        message = BotDecision(game="g", decision=1, seat=0, player=kind, version=1, body=b"{}")
        await publish_message(redis_client, ns, DECISIONS, message)
    consumer = GroupConsumer(
        redis_client,
        stream,
        GROUP,
        "c0",
        min_idle_ms=0,
        max_deliveries=3,
        dead_stream=f"{ns}:dead",
    )
    stub = Stub()
    worker = BotWorker(consumer, stub)  # type: ignore[arg-type]
    await consumer.start()
    # round 1 reads the four new messages; rounds 2 and 3 take over the two that failed
    for claim, in_hand in ((False, 4), (True, 2), (True, 2), (True, 0)):
        await worker.poll(block_ms=1, claim=claim)
        assert len(worker.inflight) == in_hand
        await worker.settle()  # handled, and acked or left pending, before the next claim
    dead: Any = await redis_client.xrange(f"{ns}:dead")
    reasons = {
        decode({FIELD: f[b"msg." + FIELD]}, BotDecision).player: f[b"reason"].decode()
        for _, f in dead
    }
    assert len(dead) == 2 and set(reasons) == {"poison", "broken"}
    assert "cannot ever work" in reasons["poison"]
    assert "UNAVAILABLE" in reasons["broken"]
    assert stub.calls == {"ok": 1, "poison": 1, "flaky": 3, "broken": 3}
    assert worker.outcomes["answered"] == 2 and worker.outcomes["poison"] == 1
    pending: Any = await redis_client.xpending(stream, GROUP)
    assert pending["pending"] == 0


async def test_the_loop_outlives_an_unexpected_error(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """A round that fails with an error no handler expects (a cluster's slots not covered
    mid-failover; any bug) costs that round, not the worker: the loop goes on and answers."""
    import asyncio

    from redis.exceptions import SlotNotCoveredError

    ns = redis_namespace
    stream = game_stream_key(ns, DECISIONS.name, "g")
    consumer = GroupConsumer(redis_client, stream, GROUP, "c0", min_idle_ms=60_000)
    stub = Stub()
    worker = BotWorker(consumer, stub)  # type: ignore[arg-type]
    await consumer.start()
    failures = [SlotNotCoveredError("slot 7 is not covered"), RuntimeError("a bug")]
    poll = worker.poll

    async def failing_poll(block_ms: int, claim: bool, c: GroupConsumer | None = None) -> bool:
        if failures:
            raise failures.pop(0)
        return await poll(block_ms, claim, c)

    worker.poll = failing_poll  # type: ignore[method-assign]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop, block_ms=50))
    message = BotDecision(game="g", decision=1, seat=0, player="ok", version=1, body=b"{}")
    await publish_message(redis_client, ns, DECISIONS, message)
    for _ in range(400):
        if worker.outcomes.get("answered"):
            break
        assert not running.done(), running
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(running, 30)
    assert not failures and worker.outcomes["answered"] == 1


async def test_stop_cuts_a_blocked_read_short(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """A quiet partition's read blocks for seconds (a read each half second on every partition
    was most of an idle worker's CPU); `stop` ends it at once, the worker does not wait it out."""
    import asyncio

    stream = game_stream_key(redis_namespace, DECISIONS.name, "g")
    consumer = GroupConsumer(redis_client, stream, GROUP, "c0", min_idle_ms=60_000)
    worker = BotWorker(consumer, Stub())  # type: ignore[arg-type]
    reads: list[str] = []
    read_new = consumer.read_new

    async def watched(count: int = 10, block_ms: int = 1000) -> list[Any]:
        reads.append(f"blocking {block_ms} ms")
        try:
            return await read_new(count, block_ms)
        except asyncio.CancelledError:
            reads.append("cut short")
            raise

    consumer.read_new = watched  # type: ignore[method-assign]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop, block_ms=4_000))  # (under the socket timeout)
    for _ in range(400):
        if reads:
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(running, 30)
    assert reads == ["blocking 4000 ms", "cut short"]
