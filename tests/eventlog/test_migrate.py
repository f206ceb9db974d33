"""`arena migrate` on a real Redis: a namespace written in the layout from before partitions
(one stream per shared stream, `NS:{GAME}:...` keys, one deadlines set) is moved into the
partitioned layout: the games' logs read and verify the same, deadlines and every message a
group still needed land in their games' partitions, a second run moves nothing; services
refuse to start on the old layout or with another partition count."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from services.contracts.streams import (
    DECISIONS,
    FINISHED,
    MATCHES,
    BotDecision,
    GameFinished,
    NewMatch,
    Seat,
    decode,
    encode,
    game_stream_key,
    legacy_game_key,
)
from services.eventlog import RedisEventStore
from services.redisinfra.migrate import OldLayout, check_layout, migrate
from services.verify import default_engine, record_game, verify


async def _old_layout(client: aioredis.Redis, ns: str) -> list[bytes]:
    """One recorded game and the shared streams, written as the old layout had them."""
    store = RedisEventStore(client, f"{ns}-src")
    await record_game(store, "g1", default_engine(), "standard", 5, 7)
    records = [d for _, d in await store.read("g1")]
    for seq, data in enumerate(records, 1):
        await client.xadd(legacy_game_key(ns, "g1", "log"), {"e": data}, id=f"{seq}-0")
    await client.hset(legacy_game_key(ns, "g1", "snap"), mapping={"v": 1, "h": b"h", "s": b"s"})
    await client.set(legacy_game_key(ns, "g1", "secret"), b"seed")
    await client.zadd(f"{ns}:deadlines", {"g1|5": 1000, "g2|3": 2000})
    old = f"{ns}:decisions"
    for d in (1, 2, 3):
        m = BotDecision(game="g1", decision=d, seat=0, player="bot:x", version=d, body=b"{}")
        await client.xadd(old, encode(m))
    await client.xgroup_create(old, "bots", id="0")
    await client.xreadgroup("bots", "b", {old: ">"}, count=2)  # 1, 2 delivered; 2 acked
    rows = await client.xrange(old)
    await client.xack(old, "bots", rows[1][0])
    await client.xadd(f"{ns}:finished", encode(GameFinished(game="g0")))
    match = NewMatch(match_id="m1", ruleset="standard", seats=[Seat("bot:random", True)] * 5)
    await client.xadd(f"{ns}:matches", encode(match))
    return records


async def test_migrate_moves_games_deadlines_and_needed_messages(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    ns = redis_namespace
    records = await _old_layout(redis_client, ns)
    with pytest.raises(OldLayout, match="arena migrate"):
        await check_layout(redis_client, ns)
    moved = await migrate(redis_client, ns)
    assert (moved.games, moved.keys, moved.deadlines) == (1, 3, 2)
    # decisions 1 (pending) and 3 (undelivered) are still needed; 2 was acked
    assert moved.messages == {"matches": 1, "decisions": 2, "finished": 1}
    store = RedisEventStore(redis_client, ns)
    assert [d for _, d in await store.read("g1")] == records
    assert verify(records).ok
    assert await store.load_snapshot("g1") is not None
    assert await redis_client.exists(legacy_game_key(ns, "g1", "log")) == 0
    rows = await redis_client.xrange(game_stream_key(ns, DECISIONS.name, "g1"))
    assert [decode(f, BotDecision).decision for _, f in rows] == [1, 3]
    assert await redis_client.xlen(game_stream_key(ns, FINISHED.name, "g0")) == 1
    assert await redis_client.xlen(game_stream_key(ns, MATCHES.name, "m1")) == 1
    assert await redis_client.zscore(game_stream_key(ns, "deadlines", "g2"), "g2|3") == 2000
    for old in ("matches", "decisions", "finished", "deadlines"):
        assert await redis_client.exists(f"{ns}:{old}") == 0
    again = await migrate(redis_client, ns)
    assert (again.keys, again.deadlines, sum(again.messages.values())) == (0, 0, 0)
    assert await check_layout(redis_client, ns) == 16


async def test_a_service_with_another_partition_count_is_refused(
    redis_client: aioredis.Redis, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await check_layout(redis_client, redis_namespace) == 16
    monkeypatch.setenv("ARENA_PARTITIONS", "4")
    with pytest.raises(OldLayout, match="ARENA_PARTITIONS=16"):
        await check_layout(redis_client, redis_namespace)
