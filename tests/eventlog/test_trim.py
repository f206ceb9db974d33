"""Trimming the shared streams below every group's ack, on a real Redis (services/redisinfra/trim.py)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
import redis.asyncio as aioredis
from prometheus_client import CollectorRegistry

from services.contracts.streams import DECISIONS, stream_key
from services.redisinfra import streams
from services.redisinfra.streams import GroupConsumer, Message, ensure_group, publish
from services.redisinfra.trim import StreamKeeper, read_state, trim_acked

BIG = b"x" * 2000  # two entries fill a stream node (4 KB): `MINID ~` can remove whole nodes


async def _ids(client: aioredis.Redis, key: str) -> list[str]:
    rows: Any = await client.xrange(key)
    return [i.decode() for i, _ in rows]


async def _fill(client: aioredis.Redis, key: str, n: int) -> list[str]:
    return [await publish(client, key, {b"m": BIG, b"i": b"%d" % i}) for i in range(n)]


async def _read(client: aioredis.Redis, key: str, group: str, count: int) -> list[str]:
    reply: Any = await client.xreadgroup(group, "c1", {key: ">"}, count=count)
    return [i.decode() for i, _ in reply[0][1]]


async def test_trims_only_what_every_group_acked(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    key = f"{redis_namespace}:decisions"
    await ensure_group(redis_client, key, "fast")
    await ensure_group(redis_client, key, "slow")
    ids = await _fill(redis_client, key, 20)
    fast = await _read(redis_client, key, "fast", 20)
    await redis_client.xack(key, "fast", *fast)
    slow = await _read(redis_client, key, "slow", 12)  # delivered 0..11
    await redis_client.xack(key, "slow", *slow[:5], *slow[6:])  # entry 5 is still pending

    state, removed = await trim_acked(redis_client, key, ("fast", "slow"), approximate=False)
    assert removed == 5
    assert await _ids(redis_client, key) == ids[5:]  # the unacked entry 5 and what follows stay
    by_group = {g.group: g for g in state.groups}
    assert (by_group["slow"].pending, by_group["slow"].lag) == (1, 8)
    assert (by_group["fast"].pending, by_group["fast"].lag) == (0, 0)
    assert by_group["slow"].oldest_unacked == ids[5]
    assert by_group["fast"].oldest_unacked is None

    await redis_client.xack(key, "slow", slow[5])  # now the slow group needs entry 12 on
    _, removed = await trim_acked(redis_client, key, ("fast", "slow"), approximate=False)
    assert removed == 7
    assert await _ids(redis_client, key) == ids[12:]


async def test_approximate_trim_never_removes_what_a_group_needs(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    key = f"{redis_namespace}:decisions"
    await ensure_group(redis_client, key, "bots")
    ids = await _fill(redis_client, key, 30)
    got = await _read(redis_client, key, "bots", 21)
    await redis_client.xack(key, "bots", *got[:20])  # entry 20 pending, 21.. undelivered
    _, removed = await trim_acked(redis_client, key, ("bots",))
    left = await _ids(redis_client, key)
    assert set(ids[20:]) <= set(left)
    assert removed >= 16 and len(left) == 30 - removed  # whole nodes (≤ 4 KB) below entry 20


async def test_a_missing_group_or_no_group_keeps_everything(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """Groups start at id 0 so a worker started later reads what came before it: until the
    group exists, nothing may be trimmed. A stream no group reads keeps all but its window."""
    key = f"{redis_namespace}:matches"
    await _fill(redis_client, key, 6)
    await ensure_group(redis_client, key, "other")
    await redis_client.xack(key, "other", *await _read(redis_client, key, "other", 6))
    state, removed = await trim_acked(redis_client, key, ("engine",), approximate=False)
    assert (state.missing, removed) == (("engine",), 0)

    bare = f"{redis_namespace}:finished"
    await _fill(redis_client, bare, 4)
    assert (await trim_acked(redis_client, bare, (), approximate=False))[1] == 0
    # a window of 60 s keeps all of it (just written) ...
    assert (await trim_acked(redis_client, bare, (), 60_000, approximate=False))[1] == 0
    await asyncio.sleep(0.05)
    # ... a window of 10 ms none of it
    assert (await trim_acked(redis_client, bare, (), 10, approximate=False))[1] == 4


async def test_the_window_holds_entries_every_group_acked(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """`finished` is read by the ratings group and by tournaments without a group: acked
    entries younger than the window stay for the latter."""
    key = f"{redis_namespace}:finished"
    await ensure_group(redis_client, key, "ratings")
    ids = await _fill(redis_client, key, 5)
    await redis_client.xack(key, "ratings", *await _read(redis_client, key, "ratings", 5))
    assert (await trim_acked(redis_client, key, ("ratings",), 60_000))[1] == 0
    assert await _ids(redis_client, key) == ids


async def test_a_dead_consumers_entry_survives_trimming_and_is_taken_over(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    key = f"{redis_namespace}:matches"
    dead = GroupConsumer(redis_client, key, "engine", "dead", min_idle_ms=0)
    await dead.start()
    ids = await _fill(redis_client, key, 3)
    assert [m.id for m in await dead.read_new(count=1, block_ms=100)] == ids[:1]  # then dies
    alive = GroupConsumer(redis_client, key, "engine", "alive", min_idle_ms=0)
    seen: list[str] = []

    async def handler(m: Message) -> None:
        seen.append(m.id)

    # the live consumer reads the rest first, then a round of trimming runs
    for m in await alive.read_new(count=10, block_ms=100):
        await alive.handle(m, handler)
    await asyncio.sleep(0)
    await trim_acked(redis_client, key, ("engine",), approximate=False)
    assert await _ids(redis_client, key) == ids  # entry 0 is pending: nothing before it goes
    assert await alive.poll(handler, block_ms=50) == 1  # XAUTOCLAIM finds it
    assert seen == [*ids[1:], ids[0]]
    await asyncio.sleep(0)
    _, removed = await trim_acked(redis_client, key, ("engine",), approximate=False)
    assert removed == 3 and await redis_client.xlen(key) == 0


def _sample(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


async def test_keeper_reports_length_pending_lag_and_age(
    redis_client: aioredis.Redis, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_PARTITIONS", "1")  # the one partition's stream is the stream
    key = stream_key(redis_namespace, "decisions", 0)
    registry = CollectorRegistry()
    keeper = StreamKeeper(redis_client, redis_namespace, registry, streams=[DECISIONS])
    await _fill(redis_client, key, 4)
    await keeper.once()  # no group yet: kept, reported missing
    assert _sample(registry, "arena_stream_group_missing", stream="decisions", group="bots") == 1
    assert _sample(registry, "arena_stream_length", stream="decisions") == 4

    await ensure_group(redis_client, key, "bots")
    got = await _read(redis_client, key, "bots", 3)
    await redis_client.xack(key, "bots", got[0])
    await asyncio.sleep(0.02)
    await keeper.once()
    labels = {"stream": "decisions", "group": "bots"}
    assert _sample(registry, "arena_stream_group_missing", **labels) == 0
    assert _sample(registry, "arena_stream_group_pending", **labels) == 2
    assert _sample(registry, "arena_stream_group_lag", **labels) == 1
    age = _sample(registry, "arena_stream_group_oldest_unacked_seconds", **labels)
    assert age is not None and 0.01 <= age < 60
    state = await read_state(redis_client, key, ("bots",))
    assert _sample(registry, "arena_stream_length", stream="decisions") == state.length
    assert _sample(registry, "arena_stream_trimmed_total", stream="decisions") == 4 - state.length


async def test_keeper_rides_out_an_unreachable_redis(capsys: pytest.CaptureFixture[str]) -> None:
    """A round that cannot reach Redis is reported (once per distinct error) and retried; the
    loop ends only when asked to."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = aioredis.Redis.from_url(f"redis://127.0.0.1:{port}/0", socket_connect_timeout=0.2)
    keeper = StreamKeeper(client, "nowhere", interval_s=0.02, name="test keeper")
    stop = asyncio.Event()
    task = asyncio.create_task(keeper.run(stop))
    await asyncio.sleep(0.3)
    assert not task.done()
    stop.set()
    await asyncio.wait_for(task, 5)
    await client.aclose()
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("test keeper")]
    assert len(lines) == 1 and "stream trimming failed: ConnectionError" in lines[0], lines


async def test_dead_letters_keep_only_the_newest(
    redis_client: aioredis.Redis, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody acks a dead letter, so the stream is capped by length instead (XADD MAXLEN ~)."""
    monkeypatch.setattr(streams, "DEAD_MAXLEN", 4)
    key, dead = f"{redis_namespace}:matches", f"{redis_namespace}:dead"
    consumer = GroupConsumer(redis_client, key, "engine", "c1", dead_stream=dead)
    await consumer.start()
    await _fill(redis_client, key, 20)
    for m in await consumer.read_new(count=20, block_ms=100):
        await consumer.dead_letter(m, "poison")
    rows: Any = await redis_client.xrange(dead)
    assert 4 <= len(rows) <= 6  # whole nodes of two 2 KB entries go
    assert rows[-1][1][b"msg.i"] == b"19"  # the newest stay
    assert (await redis_client.xpending(key, "engine"))["pending"] == 0


async def test_keeper_waits_longer_while_idle_and_snaps_back_on_work(
    redis_client: aioredis.Redis, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rounds that find nothing changed double the wait up to idle_max_s; the round that finds
    a new entry (and whatever follows it) comes interval_s later again."""
    monkeypatch.setenv("ARENA_PARTITIONS", "1")
    key = stream_key(redis_namespace, "decisions", 0)
    await ensure_group(redis_client, key, "bots")
    keeper = StreamKeeper(
        redis_client, redis_namespace, streams=[DECISIONS], interval_s=0.01, idle_max_s=0.08
    )
    rounds: list[tuple[float, bool]] = []  # (the wait before the round, whether it saw change)
    once = keeper.once

    async def counted() -> Any:
        wait = keeper.wait_s
        got = await once()
        rounds.append((wait, keeper.changed))
        return got

    monkeypatch.setattr(keeper, "once", counted)
    stop = asyncio.Event()
    task = asyncio.create_task(keeper.run(stop))
    while len(rounds) < 6:
        await asyncio.sleep(0.01)
    assert rounds[:6] == [
        (0.01, True),  # the first reading
        (0.01, False),
        (0.02, False),
        (0.04, False),
        (0.08, False),
        (0.08, False),  # no longer than idle_max_s
    ]
    await _fill(redis_client, key, 1)
    seen = len(rounds)
    while not any(changed for _, changed in rounds[seen:]):
        await asyncio.sleep(0.01)
    first = next(i for i in range(seen, len(rounds)) if rounds[i][1])
    while len(rounds) <= first + 1:
        await asyncio.sleep(0.01)
    assert rounds[first + 1][0] == 0.01  # snapped back to interval_s
    stop.set()
    await asyncio.wait_for(task, 5)
