"""Fixtures of the event log's tests on a real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.eventlog import RedisEventStore
from services.redisinfra.redis_client import connect


@pytest.fixture
async def store(redis_url: str, redis_namespace: str) -> AsyncIterator[RedisEventStore]:
    """A store over a `connect()` client (hiredis packing), as `RedisEventStore.from_url`
    (tests/eventlog/test_store_contract.py has a `store` of its own: each kind of store)."""
    s = RedisEventStore(connect(redis_url), redis_namespace)
    yield s
    await s.aclose()
