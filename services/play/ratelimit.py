"""Answers per second per seat, counted in Redis (so every server process counts together): a
fixed one-second window per key. A person clicks a few times a second at most; a script
flooding a seat's answers is refused with 429 before it reaches the engine."""

from __future__ import annotations

import time

import redis.asyncio as aioredis


class RateLimit:
    """At most `per_s` calls per key per one-second window."""

    def __init__(self, client: aioredis.Redis, prefix: str, per_s: int) -> None:
        self.client = client
        self.prefix = prefix
        self.per_s = per_s

    async def allow(self, key: str) -> bool:
        """Count one call; whether it is within the limit."""
        window = int(time.time())
        k = f"{self.prefix}:{key}:{window}"
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.incr(k)
            pipe.expire(k, 2)
            count, _ = await pipe.execute()
        return int(count) <= self.per_s
