"""`RedisSide.due` and `pending_count` on one Redis read every partition's deadlines in one
script call: the same answer as the pipeline of one command per partition (the way a Redis
Cluster is read), earliest first across partitions, `limit` kept, nothing not yet due."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.engine.side import RedisSide
from services.redisinfra.redis_client import connect


@pytest.fixture
async def side(redis_url: str, redis_namespace: str) -> AsyncIterator[RedisSide]:
    client = connect(redis_url)
    s = RedisSide(client, redis_namespace)
    yield s
    await client.aclose()


async def test_due_and_pending_in_one_call_match_the_pipeline(side: RedisSide) -> None:
    assert side._one  # one Redis: the script
    assert await side.due(10**12) == [] and await side.pending_count() == 0
    games = [f"game{i}" for i in range(40)]
    assert len({side.deadlines_key(g) for g in games}) > 8  # many partitions
    for k, g in enumerate(games):
        await side.set_deadline(g, 1, 1000 + 37 * ((k * 7) % 40))  # shuffled times
        await side.set_deadline(g, 2, 10**9 + k)  # not yet due below
    want = sorted(((1000 + 37 * ((k * 7) % 40)), g) for k, g in enumerate(games))
    for now, limit in [(999, 50), (1000, 50), (1500, 50), (3000, 50), (3000, 7), (2 * 10**9, 100)]:
        got = await side.due(now, limit)
        side._one = False  # the pipeline, as on a cluster
        try:
            assert await side.due(now, limit) == got
            assert await side.pending_count() == 80
        finally:
            side._one = True
        if now < 10**9:
            assert got == [(g, 1) for t, g in want if t <= now][:limit]
        else:
            assert len(got) == 80
    assert await side.pending_count() == 80
    await side.clear_deadline(games[0], 1)
    assert await side.pending_count() == 79
