"""The matchmaker's scripts on a real 3-master cluster: the same tests as on one Redis
(tests/matchmaking), given a cluster client. Every key a ticket, table or FORM script touches
carries the `{mm}` tag, so each script runs in one slot; a key outside it would fail here with
CROSSSLOT, never on one Redis."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from services.redisinfra.cluster_server import LocalCluster
from services.redisinfra.redis_client import connect, is_cluster
from tests.matchmaking import test_core as core
from tests.matchmaking import test_tables as tables


@pytest.fixture
async def cluster_client(redis_cluster: LocalCluster) -> AsyncIterator[aioredis.Redis]:
    client = connect(redis_cluster.url)
    assert is_cluster(client)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def ns() -> str:
    return f"mmc-{uuid.uuid4().hex[:8]}"


async def test_a_full_table_is_formed_once(cluster_client: aioredis.Redis, ns: str) -> None:
    await core.test_full_table_published_once_with_tokens(cluster_client, ns)


async def test_tickets_expire_and_refresh(cluster_client: aioredis.Redis, ns: str) -> None:
    await core.test_ttl_expiry_and_refresh(cluster_client, ns)


async def test_cancel_and_bad_input(cluster_client: aioredis.Redis, ns: str) -> None:
    await core.test_cancel_and_bad_input_change_nothing(cluster_client, ns)


async def test_bots_fill_after_the_wait(cluster_client: aioredis.Redis, ns: str) -> None:
    await core.test_bot_backfill_after_the_wait(cluster_client, ns)


async def test_an_open_table_starts_when_full(cluster_client: aioredis.Redis, ns: str) -> None:
    await tables.test_a_table_starts_when_full_with_its_settings_and_names(cluster_client, ns)
