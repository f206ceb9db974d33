"""The append script's version check on a real Redis: the log's length (XLEN) is the version on
the happy path; a log whose length is not its last sequence number (entries XDEL'd by an
operator) still gets an exact answer: its last id decides, and nothing is half-written."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from services.eventlog import RedisEventStore, VersionConflict
from services.eventlog.redis_client import connect
from services.eventlog.redis_store import OutboxCommand


@pytest.fixture
async def store(redis_url: str, redis_namespace: str) -> AsyncIterator[RedisEventStore]:
    s = RedisEventStore(connect(redis_url), redis_namespace)
    yield s
    await s.aclose()


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
