"""Shared work streams with consumer groups: at-least-once delivery that survives dead workers.

Written on redis-py directly because the recovery rules matter more than convenience here:
groups are created from id `0` (what was published before the first worker started is read,
by whichever worker comes), a message is acked only after its handler returned, entries a
dead consumer left pending are taken over with XAUTOCLAIM once idle long enough, and a message
that has been delivered `max_deliveries` times without success is parked in a dead-letter stream
with the reason instead of being retried forever. FastStream cannot keep these rules (measured:
services/eventlog/README.md, "Why not FastStream"), so it is not a dependency.
`GroupConsumer.run` rides out a Redis outage (reconnect.py): it backs off and reads on, and
re-creates its group if Redis came back without it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError
from redis.typing import EncodableT

from ..contracts.streams import DEAD, SharedStream, encode, game_of, game_stream_key, stream_key
from .batching import TickBatcher
from .reconnect import Outage, Voice, is_nogroup, is_outage

DEAD_LETTER = stream_key("arena", DEAD)
DEAD_MAXLEN = 10_000
"""The dead-letter stream keeps about the newest this many (nothing reads it but people, so
nothing can say when an entry is done with; `XADD MAXLEN ~` bounds it instead)."""

FieldValue = EncodableT

CLAIM_EVERY_MAX_S = 5.0
"""The longest `GroupConsumer.poll` goes without looking for stale messages (`claim_due`)."""


@dataclass(frozen=True)
class Message:
    """One stream entry handed to a consumer; `deliveries` counts this delivery too."""

    stream: str
    id: str
    fields: dict[bytes, bytes]
    deliveries: int = 1


Handler = Callable[[Message], Awaitable[None]]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def ensure_group(client: aioredis.Redis, stream: str, group: str) -> bool:
    """Create `group` on `stream` from id 0 (creating the stream); False if it already existed."""
    try:
        await client.xgroup_create(stream, group, id="0", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
        return False
    return True


async def ensure_groups(client: aioredis.Redis, pairs: Iterable[tuple[str, str]]) -> None:
    """Create every (stream, group) pair; call at service start-up."""
    for stream, group in pairs:
        await ensure_group(client, stream, group)


async def publish(
    client: aioredis.Redis, stream: str, fields: Mapping[str, FieldValue] | Mapping[bytes, bytes]
) -> str:
    """Append an entry to stream `stream` (a key); returns its id."""
    body: dict[FieldValue, FieldValue] = {k: v for k, v in fields.items()}
    return _text(await client.xadd(stream, body))


async def publish_message(
    client: aioredis.Redis, namespace: str, stream: SharedStream[Any], message: Any
) -> str:
    """Publish a typed message (services.contracts.streams) to its shared stream, in the
    partition of its game."""
    if not isinstance(message, stream.message):
        raise TypeError(f"{stream.name} carries {stream.message.__name__}, not {message!r}")
    key = game_stream_key(namespace, stream.name, game_of(message))
    return await publish(client, key, encode(message))


class GroupConsumer:
    """One named consumer in a group: read, handle, ack; take over and dead-letter on failure."""

    def __init__(
        self,
        client: aioredis.Redis,
        stream: str,
        group: str,
        consumer: str,
        *,
        min_idle_ms: int = 30_000,
        max_deliveries: int = 5,
        dead_stream: str = DEAD_LETTER,
    ) -> None:
        self.client = client
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.min_idle_ms = min_idle_ms
        self.max_deliveries = max_deliveries
        self.dead_stream = dead_stream
        self._claim_cursor = "0-0"
        self._next_claim = 0.0  # (time.monotonic) when `poll` may look for stale messages again
        self._own_pending = False  # a handler met a Redis outage: read our own pending again
        self.acks: TickBatcher[str, None] = TickBatcher(self._ack_batch)

    async def start(self) -> None:
        """Make sure the group exists (idempotent). The first poll then reads this consumer's
        own pending messages: a worker restarted under the same name resumes what it held
        when it died at once, not after ``min_idle_ms``."""
        await ensure_group(self.client, self.stream, self.group)
        self._own_pending = True

    async def read_new(self, count: int = 10, block_ms: int = 1000) -> list[Message]:
        """Messages never delivered to this group before (waits up to `block_ms`)."""
        reply: Any = await self.client.xreadgroup(
            self.group, self.consumer, {self.stream: ">"}, count=count, block=block_ms
        )
        if not reply:
            return []
        rows = next(iter(reply.values()))[0] if isinstance(reply, dict) else reply[0][1]
        return [Message(self.stream, _text(i), dict(f)) for i, f in rows if f is not None]

    async def read_own_pending(self, count: int = 10) -> list[Message]:
        """Messages delivered to this consumer and not acked yet (its handler met an outage):
        read again at once rather than after ``min_idle_ms``."""
        reply: Any = await self.client.xreadgroup(
            self.group, self.consumer, {self.stream: "0"}, count=count
        )
        if not reply:
            return []
        rows = next(iter(reply.values()))[0] if isinstance(reply, dict) else reply[0][1]
        return [Message(self.stream, _text(i), dict(f), 2) for i, f in rows if f]

    async def retry_own(self, count: int = 10) -> list[Message]:
        """Our own pending messages if a handler met an outage since the last call, else []."""
        if not self._own_pending:
            return []
        msgs = await self.read_own_pending(count)
        self._own_pending = False  # set again by `handle` if the outage goes on
        return msgs

    async def claim_stale(self, count: int = 10) -> list[Message]:
        """Take over messages pending longer than `min_idle_ms` (e.g. their consumer died).

        Messages that have now been delivered more than `max_deliveries` times are parked in the
        dead-letter stream instead of being returned: a message that keeps killing its consumer
        never reaches the handler's except clause, so this is the only place it can be stopped.
        """
        reply: Any = await self.client.xautoclaim(
            self.stream, self.group, self.consumer, self.min_idle_ms, self._claim_cursor, count
        )
        self._claim_cursor = _text(reply[0])
        # Redis 7 lists entries deleted from the stream separately; they are already gone from
        # the pending list. Redis 6.2 returns them as nil entries, skipped here.
        claimed = [(_text(i), dict(f)) for i, f in reply[1] if i is not None and f is not None]
        if not claimed:
            return []
        async with self.client.pipeline(transaction=False) as pipe:
            for mid, _ in claimed:
                pipe.xpending_range(self.stream, self.group, mid, mid, 1)
            pending: list[Any] = await pipe.execute()
        out: list[Message] = []
        for (mid, fields), info in zip(claimed, pending, strict=True):
            deliveries = int(info[0]["times_delivered"]) if info else 1
            msg = Message(self.stream, mid, fields, deliveries)
            if deliveries > self.max_deliveries:
                reason = f"delivered {deliveries - 1} times without an ack (consumer died?)"
                await self.dead_letter(msg, reason)
            else:
                out.append(msg)
        return out

    async def ack(self, msg: Message) -> None:
        """Mark `msg` done for the group (the acks of one loop iteration go as one XACK)."""
        await self.acks.submit(msg.id)

    async def _ack_batch(self, ids: list[str]) -> list[None]:
        await self.client.xack(self.stream, self.group, *ids)
        return [None] * len(ids)

    async def dead_letter(self, msg: Message, reason: str) -> None:
        """Park `msg` in the dead-letter stream with `reason`, then ack it.

        Two commands, not MULTI: the streams live in different cluster slots. A crash between
        them leaves the message pending, so it may be parked twice; never lost.
        """
        fields: dict[FieldValue, FieldValue] = {
            "stream": self.stream,
            "id": msg.id,
            "group": self.group,
            "consumer": self.consumer,
            "deliveries": msg.deliveries,
            "reason": reason,
        }
        fields.update({b"msg." + k: v for k, v in msg.fields.items()})
        await self.client.xadd(self.dead_stream, fields, maxlen=DEAD_MAXLEN, approximate=True)
        await self.ack(msg)

    async def handle(self, msg: Message, handler: Handler) -> bool:
        """Run `handler`; ack on success. On failure retry later, or dead-letter at the limit.

        A Redis outage (in the handler or the ack) is not the message's fault: it stays
        pending with this consumer and is read again once Redis is back (handled again if only
        the ack was lost: delivery is at least once)."""
        try:
            try:
                await handler(msg)
            except Exception as exc:
                if is_outage(exc):
                    raise
                if msg.deliveries >= self.max_deliveries:
                    await self.dead_letter(msg, f"{type(exc).__name__}: {exc}")
                return False
            await self.ack(msg)
        except Exception as exc:
            if not is_outage(exc):
                raise
            self._own_pending = True
            return False
        return True

    async def poll(self, handler: Handler, count: int = 10, block_ms: int = 1000) -> int:
        """One round: stale messages first (when a claim is due: `claim_due`), else new ones;
        returns how many were handled OK."""
        msgs = await self.retry_own(count)
        if not msgs and self.claim_due():
            msgs = await self.claim_stale(count)
            if self._claim_cursor != "0-0":  # the scan of the pending list is not through
                self._next_claim = 0.0
        msgs = msgs or await self.read_new(count, block_ms)
        return sum([await self.handle(m, handler) for m in msgs])

    def claim_due(self) -> bool:
        """Whether `poll` looks for stale messages this round: at most every half
        `min_idle_ms`, and at least every `CLAIM_EVERY_MAX_S`. A message cannot turn stale
        faster than `min_idle_ms`, so a dead consumer's message is still taken over within
        1.5 `min_idle_ms` (and 5 s); an XAUTOCLAIM every round cost each worker one command a
        partition a second on a quiet stream (16 a second a stream), and one before every read
        on a busy one."""
        now = time.monotonic()
        if now < self._next_claim:
            return False
        self._next_claim = now + min(self.min_idle_ms / 2000, CLAIM_EVERY_MAX_S)
        return True

    async def run(
        self,
        handler: Handler,
        stop: asyncio.Event,
        block_ms: int = 1000,
        voice: Voice | None = None,
    ) -> None:
        """Poll until `stop` is set. No error ends it: through a Redis outage (or any other
        failed round, said once) it backs off with jitter and polls on once Redis answers; a
        group lost with Redis's data is created again.

        ``block_ms`` stays below the client's socket timeout (redis-py's default is 5 s), or a
        quiet stream would read as an outage."""
        outage = Outage(f"consumer {self.consumer} of {self.stream}", voice=voice)
        started = False
        while not stop.is_set():
            try:
                if not started:
                    await self.start()
                    started = True
                await self.poll(handler, block_ms=block_ms)
            except Exception as exc:
                if is_nogroup(exc):
                    started = False
                    continue
                await outage.failed(exc, stop)
                continue
            outage.ok()
