"""RedisEventStore.append with an outbox, on a real Redis: the outbox commands run in the append's
script exactly when the version check passes; refused names never reach Redis; appends survive
SCRIPT FLUSH (NOSCRIPT reload), with and without an outbox, alone or batched."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from services.eventlog import RedisEventStore, VersionConflict
from services.eventlog.redis_store import OutboxCommand


def _keys(ns: str) -> tuple[str, str]:
    return f"{ns}:outbox", f"{ns}:deadlines"


def _outbox(ns: str, n: int) -> list[OutboxCommand]:
    out, zset = _keys(ns)
    return [
        OutboxCommand("ZREM", zset, (f"g|{n - 1}",)),
        OutboxCommand("ZADD", zset, (1000 + n, f"g|{n}")),
        OutboxCommand("XADD", out, ("*", "game", "g", "decision", n, "body", b"\x00\xffraw")),
    ]


async def test_outbox_runs_with_the_append(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    ns = redis_namespace
    out, zset = _keys(ns)
    await redis_client.zadd(zset, {"g|0": 5, "other|9": 7})
    version = await store.append("g", 0, [b"a", b"b"], _outbox(ns, 1))
    assert version == 2
    assert [r for _, r in await store.read("g")] == [b"a", b"b"]
    assert await redis_client.zrange(zset, 0, -1, withscores=True) == [
        (b"other|9", 7.0),
        (b"g|1", 1001.0),
    ]
    rows = await redis_client.xrange(out)
    assert [f for _, f in rows] == [{b"game": b"g", b"decision": b"1", b"body": b"\x00\xffraw"}]
    # a second accepted append runs its outbox too
    assert await store.append("g", 2, [b"c"], _outbox(ns, 2)) == 3
    assert await redis_client.zrange(zset, 0, -1) == [b"other|9", b"g|2"]
    assert await redis_client.xlen(out) == 2


async def test_version_conflict_writes_nothing(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    ns = redis_namespace
    out, zset = _keys(ns)
    assert await store.append("g", 0, [b"a", b"b"], _outbox(ns, 1)) == 2
    before = (
        await redis_client.xlen(store.log_key("g")),
        await redis_client.zrange(zset, 0, -1, withscores=True),
        await redis_client.xrange(out),
    )
    for expected in (0, 1, 3, 7):
        with pytest.raises(VersionConflict) as info:
            await store.append("g", expected, [b"x"], _outbox(ns, 2))
        assert info.value.actual == 2
    with pytest.raises(VersionConflict):  # nothing to append, still checked
        await store.append("g", 5, [], _outbox(ns, 2))
    after = (
        await redis_client.xlen(store.log_key("g")),
        await redis_client.zrange(zset, 0, -1, withscores=True),
        await redis_client.xrange(out),
    )
    assert after == before
    assert await store.head("g") == 2


async def test_conflict_and_success_in_one_pipeline(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """Concurrent appends share a round trip; one game's conflict leaves the other's append and
    outbox alone."""
    ns = redis_namespace
    out, zset = _keys(ns)
    await store.append("g1", 0, [b"a"])
    batches = store.auto.batcher.batches
    results = await asyncio.gather(
        store.append("g1", 0, [b"late"], [OutboxCommand("XADD", out, ("*", "who", "g1"))]),
        store.append(
            "g2",
            0,
            [b"first"],
            [
                OutboxCommand("XADD", out, ("*", "who", "g2")),
                OutboxCommand("ZADD", zset, (1, "g2|1")),
            ],
        ),
        return_exceptions=True,
    )
    assert store.auto.batcher.batches == batches + 1
    assert isinstance(results[0], VersionConflict) and results[1] == 1
    assert [f for _, f in await redis_client.xrange(out)] == [{b"who": b"g2"}]
    assert await redis_client.zrange(zset, 0, -1) == [b"g2|1"]
    assert [r for _, r in await store.read("g1")] == [b"a"]


@pytest.mark.parametrize("name", ["SET", "DEL", "EVAL", "xadd", "FLUSHALL", ""])
async def test_other_commands_refused_before_sending(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str, name: str
) -> None:
    out, _ = _keys(redis_namespace)
    batches = store.auto.batcher.batches
    with pytest.raises(ValueError):
        await store.append(
            "g",
            0,
            [b"a"],
            [OutboxCommand("XADD", out, ("*", "k", "v")), OutboxCommand(name, out, ("x",))],
        )
    assert store.auto.batcher.batches == batches  # nothing was queued for Redis
    assert await redis_client.exists(store.log_key("g"), out) == 0
    assert await store.head("g") == 0


async def test_appends_survive_script_flush(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    ns = redis_namespace
    out, zset = _keys(ns)
    assert await store.append("g", 0, [b"warm"], _outbox(ns, 1)) == 1  # both scripts loaded
    assert await store.append("g", 1, [b"warm2"]) == 2

    await redis_client.script_flush()
    assert await store.append("g", 2, [b"plain"]) == 3
    await redis_client.script_flush()
    assert await store.append("g", 3, [b"boxed"], _outbox(ns, 2)) == 4
    await redis_client.script_flush()
    with pytest.raises(VersionConflict):  # a reloaded script still checks the version
        await store.append("g", 1, [b"stale"], _outbox(ns, 9))

    assert [r for _, r in await store.read("g")] == [b"warm", b"warm2", b"plain", b"boxed"]
    assert await redis_client.zrange(zset, 0, -1) == [b"g|2"]
    assert await redis_client.xlen(out) == 2


async def test_batched_appends_survive_script_flush(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """Every append of a pipeline gets NOSCRIPT after a flush: each script is loaded once
    (not once per append: 200 appends at once would take 200 connections) and the appends that
    waited for it go again, together."""
    ns = redis_namespace
    out, _ = _keys(ns)
    await store.append("warm", 0, [b"x"], _outbox(ns, 1))
    await redis_client.script_flush()
    games = [f"g{i}" for i in range(6)]
    batches = store.auto.batcher.batches
    versions = await asyncio.gather(
        *(
            store.append(
                g,
                0,
                [g.encode(), b"2"],
                [OutboxCommand("XADD", out, ("*", "game", g))] if i % 2 else (),
            )
            for i, g in enumerate(games)
        )
    )
    assert versions == [2] * len(games)
    # one pipeline, then one more per script (with and without an outbox) for the retries
    assert batches + 1 < store.auto.batcher.batches <= batches + 3
    for g in games:
        assert [r for _, r in await store.read(g)] == [g.encode(), b"2"]
    published = {f[b"game"] for _, f in await redis_client.xrange(out) if b"game" in f}
    assert published == {b"g", b"g1", b"g3", b"g5"}


async def test_outbox_key_of_the_wrong_type_writes_nothing(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """A script's writes are not undone on error, so the key types are checked before any."""
    ns = redis_namespace
    out, zset = _keys(ns)
    await redis_client.set(out, "a string, not a stream")
    await redis_client.zadd(zset, {"g|0": 5})
    with pytest.raises(Exception, match="holds a string"):
        await store.append("g", 0, [b"a"], _outbox(ns, 1))
    assert await store.read("g") == []
    assert await redis_client.zrange(zset, 0, -1) == [b"g|0"]
    assert await redis_client.get(out) == b"a string, not a stream"


async def test_one_key_used_as_two_types_writes_nothing(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """TYPE is asked once per key: a missing key that one command would make a stream and
    another a zset is refused before anything is written, as a key holding a zset would be."""
    ns = redis_namespace
    key = f"{ns}:both"
    outbox = [
        OutboxCommand("XADD", key, ("*", "game", "g")),
        OutboxCommand("ZADD", key, (5, "g|1")),
    ]
    with pytest.raises(Exception, match="holds a stream, not a zset"):
        await store.append("g", 0, [b"a"], outbox)
    assert await store.read("g") == []
    assert await redis_client.exists(key) == 0
    await redis_client.zadd(key, {"g|0": 1})
    with pytest.raises(Exception, match="holds a zset, not a stream"):
        await store.append("g", 0, [b"a"], outbox)
    assert await store.read("g") == []
    assert await redis_client.zrange(key, 0, -1) == [b"g|0"]


async def test_zmove_moves_a_deadline_only_with_its_append(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """ZMOVE (the engine's usual outbox, side.py): the old member dropped and the new one set,
    as ZREM then ZADD, only when the append is accepted; alone in a call and batched."""
    _, zset = _keys(redis_namespace)
    await redis_client.zadd(zset, {"g|0": 5, "other|9": 7})
    move = [OutboxCommand("ZMOVE", zset, ("g|0", "1001", "g|1"))]
    assert await store.append("g", 0, [b"a"], move) == 1
    assert await redis_client.zrange(zset, 0, -1, withscores=True) == [
        (b"other|9", 7.0),
        (b"g|1", 1001.0),
    ]
    again = [OutboxCommand("ZMOVE", zset, ("g|1", 2000, "g|2"))]
    with pytest.raises(VersionConflict):
        await store.append("g", 0, [b"x"], again)
    assert await redis_client.zrange(zset, 0, -1) == [b"other|9", b"g|1"]
    results = await store.append_many(
        [
            ("g", 1, [b"b"], [("ZMOVE", zset, ("g|1", "3000", "g|2"))]),
            ("h", 4, [b"c"], [("ZMOVE", zset, ("h|3", "10", "h|4"))]),  # a conflict
            ("other", 0, [b"d"], [("ZMOVE", zset, ("other|9", "9", "other|9"))]),
        ]
    )
    assert results[0] == 2 and isinstance(results[1], VersionConflict) and results[2] == 1
    # (a member moved onto itself keeps it, at its new time)
    assert await redis_client.zrange(zset, 0, -1, withscores=True) == [
        (b"other|9", 9.0),
        (b"g|2", 3000.0),
    ]


async def test_zmove_refused_before_anything_is_written(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """A ZMOVE on a key that is not a zset, or with other than its three arguments, is
    refused with nothing written (the log, the key)."""
    out, zset = _keys(redis_namespace)
    await redis_client.set(zset, "a string, not a zset")
    with pytest.raises(Exception, match="holds a string, not a zset"):
        await store.append("g", 0, [b"a"], [OutboxCommand("ZMOVE", zset, ("g|0", 5, "g|1"))])
    assert await store.read("g") == []
    assert await redis_client.get(zset) == b"a string, not a zset"
    with pytest.raises(Exception, match="ZMOVE takes 3 arguments, not 2"):
        await store.append("g", 0, [b"a"], [OutboxCommand("ZMOVE", out, (5, "g|1"))])
    assert await store.read("g") == []
    assert await redis_client.exists(out) == 0
