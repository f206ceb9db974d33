"""A test's own Redis client, shared by tests/conftest.py's `redis_client` and the browser
tests' session-loop copy of it (tests/browser/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import redis.asyncio as aioredis


async def namespaced_client(redis_url: str, redis_namespace: str) -> AsyncIterator[aioredis.Redis]:
    """An asyncio redis-py client (bytes replies); deletes the namespace's keys afterwards (the
    body of both `redis_client` fixtures)."""
    client = aioredis.Redis.from_url(redis_url)
    yield client
    keys = [k async for k in client.scan_iter(match=f"{redis_namespace}*", count=1000)]
    if keys:
        await client.delete(*keys)
    await client.aclose()
