"""Consumers of a partitioned shared stream: one consumer-group member per partition.

A shared stream is P streams (services/contracts/streams.py, `stream_keys`), each with its own
copy of the consumer group, so a worker reads every partition through one `GroupConsumer` per
partition key. Each runs its own loop (a blocking read names one key: on a Redis Cluster the
partitions sit in different slots, and one XREADGROUP may not span slots); acks, takeover and
dead letters stay per partition.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis

from ..contracts.streams import DEAD, SharedStream, stream_key, stream_keys
from .reconnect import Voice
from .streams import GroupConsumer, Handler


def group_consumers(
    client: aioredis.Redis,
    namespace: str,
    stream: SharedStream[Any],
    consumer: str,
    *,
    group: str | None = None,
    **options: Any,
) -> list[GroupConsumer]:
    """One GroupConsumer named `consumer` in `group` (default: the stream's first group) per
    partition of `stream`; `options` as GroupConsumer takes them (dead letters default to the
    namespace's `dead` stream)."""
    options.setdefault("dead_stream", stream_key(namespace, DEAD))
    name = stream.groups[0] if group is None else group
    return [
        GroupConsumer(client, key, name, consumer, **options)
        for key in stream_keys(namespace, stream.name)
    ]


def run_all(
    consumers: list[GroupConsumer],
    handler: Callable[[GroupConsumer], Handler],
    stop: asyncio.Event,
    block_ms: int = 1000,
) -> list[asyncio.Task[None]]:
    """Start `consumer.run(handler(consumer), stop)` for every consumer; the tasks. An outage
    is said once for all of them (`reconnect.Voice`), not once per partition."""
    if not consumers:
        return []
    first = consumers[0]
    voice = Voice(f"consumer {first.consumer} of {len(consumers)} partitions of {first.group}")
    return [
        asyncio.create_task(c.run(handler(c), stop, block_ms=block_ms, voice=voice))
        for c in consumers
    ]
