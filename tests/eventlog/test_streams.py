"""Consumer-group recovery on a real Redis: takeover of a dead consumer's work, dead letters."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
import time

import pytest
import redis.asyncio as aioredis

from services.redisinfra.streams import GroupConsumer, Message, ensure_group, publish


def names(ns: str) -> tuple[str, str]:
    return f"{ns}:matches", f"{ns}:dead"


async def test_group_created_from_zero_sees_earlier_messages(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    stream, _ = names(redis_namespace)
    await publish(redis_client, stream, {"match": "m1"})
    assert await ensure_group(redis_client, stream, "engine")
    assert not await ensure_group(redis_client, stream, "engine")  # BUSYGROUP is fine
    c = GroupConsumer(redis_client, stream, "engine", "w1")
    msgs = await c.read_new(block_ms=100)
    assert [m.fields for m in msgs] == [{b"match": b"m1"}]


async def test_ack_removes_from_pending(redis_client: aioredis.Redis, redis_namespace: str) -> None:
    stream, _ = names(redis_namespace)
    c = GroupConsumer(redis_client, stream, "engine", "w1", min_idle_ms=0)
    await c.start()
    await publish(redis_client, stream, {"match": "m1"})
    seen: list[Message] = []

    async def handler(m: Message) -> None:
        seen.append(m)

    assert await c.poll(handler, block_ms=100) == 1
    assert (await redis_client.xpending(stream, "engine"))["pending"] == 0
    assert await c.poll(handler, block_ms=50) == 0
    assert len(seen) == 1


async def test_killed_consumer_entry_is_claimed_by_another(
    redis_url: str, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """A worker process reads a match and is SIGKILLed before acking; another takes it over."""
    stream, _ = names(redis_namespace)
    await ensure_group(redis_client, stream, "engine")
    mid = await publish(redis_client, stream, {"match": "m1"})
    doomed = (
        "import os, signal, redis\n"
        f"r = redis.Redis.from_url({redis_url!r})\n"
        f"got = r.xreadgroup('engine', 'doomed', {{{stream!r}: '>'}}, count=1, block=2000)\n"
        "assert got, 'nothing read'\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", doomed], timeout=30)
    assert proc.returncode == -9
    pending = await redis_client.xpending_range(stream, "engine", "-", "+", 10)
    assert [(p["message_id"].decode(), p["consumer"].decode()) for p in pending] == [
        (mid, "doomed")
    ]

    # idle thresholds on either side of the time that has passed, whatever the machine's speed
    patient = GroupConsumer(redis_client, stream, "engine", "w2", min_idle_ms=3_600_000)
    assert await patient.read_new(block_ms=10) == []  # not new any more: only a claim finds it
    assert await patient.claim_stale() == []  # not idle long enough yet
    rescuer = GroupConsumer(redis_client, stream, "engine", "w2", min_idle_ms=50)
    await asyncio.sleep(0.06)
    handled: list[Message] = []

    async def handler(m: Message) -> None:
        handled.append(m)

    assert await rescuer.poll(handler, block_ms=10) == 1
    assert [(m.id, m.fields, m.deliveries) for m in handled] == [(mid, {b"match": b"m1"}, 2)]
    assert (await redis_client.xpending(stream, "engine"))["pending"] == 0


async def test_poison_message_is_dead_lettered_after_n_tries(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    stream, dead = names(redis_namespace)
    c = GroupConsumer(
        redis_client, stream, "engine", "w1", min_idle_ms=20, max_deliveries=3, dead_stream=dead
    )
    await c.start()
    mid = await publish(redis_client, stream, {"match": "poison"})
    await publish(redis_client, stream, {"match": "fine"})
    tries: list[tuple[bytes, int]] = []

    async def handler(m: Message) -> None:
        tries.append((m.fields[b"match"], m.deliveries))
        if m.fields[b"match"] == b"poison":
            raise ValueError("cannot parse match")

    for _ in range(20):
        await c.poll(handler, block_ms=10)
        await asyncio.sleep(0.03)
        if await redis_client.xlen(dead):
            break
    assert [t for t in tries if t[0] == b"poison"] == [
        (b"poison", 1),
        (b"poison", 2),
        (b"poison", 3),
    ]
    assert (b"fine", 1) in tries
    parked = await redis_client.xrange(dead)
    assert len(parked) == 1
    fields = parked[0][1]
    assert fields[b"id"].decode() == mid and fields[b"stream"].decode() == stream
    assert fields[b"deliveries"] == b"3"
    assert fields[b"reason"] == b"ValueError: cannot parse match"
    assert fields[b"msg.match"] == b"poison"
    assert (await redis_client.xpending(stream, "engine"))["pending"] == 0


async def test_message_that_kills_its_consumers_is_dead_lettered_on_claim(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """Consumers that die mid-handler never reach an except clause; the claim counts for them."""
    stream, dead = names(redis_namespace)
    kw = {"min_idle_ms": 10, "max_deliveries": 2, "dead_stream": dead}
    await ensure_group(redis_client, stream, "engine")
    await publish(redis_client, stream, {"match": "crasher"})
    first = GroupConsumer(redis_client, stream, "engine", "w1", **kw)  # type: ignore[arg-type]
    assert len(await first.read_new(block_ms=10)) == 1  # ...and dies
    await asyncio.sleep(0.02)
    second = GroupConsumer(redis_client, stream, "engine", "w2", **kw)  # type: ignore[arg-type]
    assert len(await second.claim_stale()) == 1  # delivery 2, and dies too
    await asyncio.sleep(0.02)
    third = GroupConsumer(redis_client, stream, "engine", "w3", **kw)  # type: ignore[arg-type]
    assert await third.claim_stale() == []  # delivery 3 > 2: parked, not handed out
    parked = await redis_client.xrange(dead)
    assert len(parked) == 1 and b"without an ack" in parked[0][1][b"reason"]
    assert (await redis_client.xpending(stream, "engine"))["pending"] == 0


async def test_stale_messages_are_looked_for_at_most_every_half_idle_time(
    redis_client: aioredis.Redis, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`poll` asks XAUTOCLAIM once, then not again for half of `min_idle_ms` (no message can
    turn stale faster), however many rounds it reads new messages meanwhile; and a message a
    dead consumer left is still taken over."""
    stream, _ = names(redis_namespace)
    await ensure_group(redis_client, stream, "engine")
    c = GroupConsumer(redis_client, stream, "engine", "alive", min_idle_ms=400)
    claims: list[float] = []
    claim_stale = c.claim_stale

    async def counted(count: int = 10) -> list[Message]:
        claims.append(time.monotonic())
        return await claim_stale(count)

    monkeypatch.setattr(c, "claim_stale", counted)
    handled: list[Message] = []

    async def handler(m: Message) -> None:
        handled.append(m)

    rounds = 0
    for _ in range(5):  # quick rounds
        await c.poll(handler, block_ms=10)
        rounds += 1
    mid = await publish(redis_client, stream, {"match": "m1"})
    dead = GroupConsumer(redis_client, stream, "engine", "dead", min_idle_ms=400)
    assert len(await dead.read_new(block_ms=10)) == 1  # ...and it dies holding it
    deadline = time.monotonic() + 5
    while not handled and time.monotonic() < deadline:
        await c.poll(handler, block_ms=20)
        rounds += 1
    assert [(m.id, m.deliveries) for m in handled] == [(mid, 2)]
    assert 2 <= len(claims) < rounds
    gaps = [b - a for a, b in itertools.pairwise(claims)]
    assert min(gaps) >= 0.2  # half of min_idle_ms between claims, never less
