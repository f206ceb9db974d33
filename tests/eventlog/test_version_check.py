"""The append script's version check on a real Redis: the log's length (XLEN) is the version on
the happy path; a log whose length is not its last sequence number (entries XDEL'd by an
operator) still gets an exact answer: its last id decides, and nothing is half-written."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from services.eventlog import RedisEventStore, VersionConflict
from services.eventlog.redis_store import OutboxCommand


async def test_a_log_shorter_than_its_last_id(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    assert await store.append("g", 0, [b"a", b"b", b"c", b"d"]) == 4
    key = store.log_key("g")
    await redis_client.xdel(key, "2-0")  # length 3, last id 4
    assert await redis_client.xlen(key) == 3
    # the length matches this stale version, but the last id says 4: a conflict, nothing written
    out = f"{redis_namespace}:out"
    with pytest.raises(VersionConflict) as stale:
        await store.append("g", 3, [b"x"], [OutboxCommand("XADD", out, ("*", "k", "v"))])
    assert stale.value.actual == 4
    assert await redis_client.exists(out) == 0
    with pytest.raises(VersionConflict) as err:
        await store.append("g", 2, [b"x"])
    assert err.value.actual == 4
    with pytest.raises(VersionConflict):
        await store.append("g", 3, [])  # an empty batch checks the last id too
    # the last id is the version: appending after it works though the length differs
    assert await store.append("g", 4, [b"e"]) == 5
    assert [seq for seq, _ in await store.read("g")] == [1, 3, 4, 5]


async def test_one_call_for_many_games_each_checked_on_its_own(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """The appends of one loop iteration share one script call (one Redis): a conflict, an
    outbox key of the wrong type and an empty batch are each answered for their own game only,
    and write nothing; the others are appended with their outboxes, in order."""
    ns = redis_namespace
    out, wrong = f"{ns}:out", f"{ns}:wrong"
    await redis_client.set(wrong, "a string")
    for g in ("ok1", "stale", "bad", "ok2", "empty"):
        assert await store.append(g, 0, [b"first"]) == 1
    calls = store.appender.calls
    results = await asyncio.gather(
        store.append("ok1", 1, [b"a", b"b"], [OutboxCommand("XADD", out, ("*", "g", "ok1"))]),
        store.append("stale", 0, [b"x"], [OutboxCommand("XADD", out, ("*", "g", "stale"))]),
        store.append("bad", 1, [b"x"], [OutboxCommand("ZADD", wrong, (1, "m"))]),
        store.append("ok2", 1, [b"c"], [OutboxCommand("XADD", out, ("*", "g", "ok2"))]),
        store.append("empty", 1, []),
        store.append("empty", 0, []),
        return_exceptions=True,
    )
    assert store.appender.calls == calls + 1
    assert results[0] == 3 and results[3] == 2 and results[4] == 1
    assert isinstance(results[1], VersionConflict) and results[1].actual == 1
    assert isinstance(results[2], ResponseError) and "holds a string" in str(results[2])
    assert isinstance(results[5], VersionConflict) and results[5].actual == 1
    assert [r for _, r in await store.read("ok1")] == [b"first", b"a", b"b"]
    assert [r for _, r in await store.read("ok2")] == [b"first", b"c"]
    for g in ("stale", "bad", "empty"):
        assert [r for _, r in await store.read(g)] == [b"first"]
    assert [f[b"g"] for _, f in await redis_client.xrange(out)] == [b"ok1", b"ok2"]
    assert await redis_client.get(wrong) == b"a string"
