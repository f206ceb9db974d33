"""Bot-only games through a running platform: publish matches, learn when and how they ended.

A match is published to its game's partition's matches stream as the matchmaker publishes one (a `NewMatch`,
services/contracts/streams.py; game id = match id, seats `bot:POLICY`), so it runs through the
engine workers and the bot service like any table. Publishing the same match id again is a
no-op for a game that exists (the engine's create is idempotent), which is what lets a
tournament resume.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from ..contracts.streams import (
    FINISHED,
    MATCHES,
    BadMessage,
    GameFinished,
    NewMatch,
    Seat,
    decode,
    stream_keys,
)
from ..eventlog.catalog import read_archived
from ..eventlog.entry import decode_entry
from ..eventlog.records import Header, SeedReveal, decode_payload
from ..eventlog.redis_store import RedisEventStore
from ..matchmaking.ratings import GameResult
from ..matchmaking.results import NotFinished, result_of
from ..redisinfra.redis_client import is_cluster
from ..redisinfra.streams import publish_message

BOT = "bot:"


def bot_match(
    match_id: str,
    ruleset: str,
    policies: list[str],
    seed: int,
    options: dict[str, Any] | None = None,
) -> NewMatch:
    """The match of a table whose seat s is a bot playing ``policies[s]``."""
    return NewMatch(
        match_id=match_id,
        ruleset=ruleset,
        seed=seed,
        options=options or {},
        seats=[Seat(f"{BOT}{p}", True) for p in policies],
    )


class Games:
    """Publish matches and wait for their results, over one Redis client."""

    def __init__(self, client: aioredis.Redis, namespace: str, archive_dir: Path | None) -> None:
        self.client = client
        self.ns = namespace
        self.store = RedisEventStore(client, namespace)
        self.archive_dir = archive_dir
        self.finished_keys = stream_keys(namespace, FINISHED.name)
        self._cursors = dict.fromkeys(self.finished_keys, "$")

    async def mark(self) -> None:
        """Remember the end of every finished stream now: `finished` reports only later
        entries."""
        async with self.client.pipeline(transaction=False) as pipe:
            for key in self.finished_keys:
                pipe.xrevrange(key, count=1)
            lasts: list[Any] = await pipe.execute()
        for key, last in zip(self.finished_keys, lasts, strict=True):
            self._cursors[key] = last[0][0].decode() if last else "0-0"

    async def publish(self, match: NewMatch) -> None:
        """Publish a match to the engine workers."""
        await publish_message(self.client, self.ns, MATCHES, match)

    async def finished(self, block_ms: int = 500) -> list[str]:
        """Game ids announced on the finished streams since the last call (or `mark`).

        On one Redis one XREAD waits on every partition; on a cluster (partitions in different
        slots) each is read without blocking in one pipeline, then this waits a little."""
        if is_cluster(self.client):
            async with self.client.pipeline(transaction=False) as pipe:
                for key, cursor in self._cursors.items():
                    pipe.xread({key: cursor}, count=500)
                replies: list[Any] = await pipe.execute()
            reply = [row for r in replies for row in _rows(r)]
            if not reply:
                await asyncio.sleep(min(block_ms, 50) / 1000)
        else:
            streams: dict[Any, Any] = dict(self._cursors)
            reply = _rows(await self.client.xread(streams, count=500, block=block_ms))
        out: list[str] = []
        for key, rows in reply:
            for entry_id, fields in rows:
                self._cursors[key] = entry_id.decode()
                try:
                    out.append(decode(fields, GameFinished).game)
                except BadMessage:
                    continue  # not ours to judge: the ratings group dead-letters it
        return out

    async def result(self, game: str, tries: int = 20) -> Finished | None:
        """The game's result, header and seed reveal if it has finished (live log or archive
        file), else None."""
        for _ in range(tries):
            try:
                records = await self._records(game)
                return Finished(
                    result_of(records),
                    decode_payload(decode_entry(records[0]).payload, Header),
                    decode_payload(decode_entry(records[-1]).payload, SeedReveal),
                )
            except NotFinished:
                pass
            except Exception:  # noqa: BLE001 - a log being archived and dropped right now
                pass
            if tries > 1:
                await asyncio.sleep(0.05)
        return None

    async def _records(self, game: str) -> list[bytes]:
        records = [data for _, data in await self.store.read(game)]
        if records:
            return records
        stored = await read_archived(self.archive_dir, game) if self.archive_dir else None
        if stored is None:
            raise NotFinished(f"game {game}: neither a live log nor an archive file")
        return stored


def _rows(reply: Any) -> list[tuple[str, Any]]:
    """An XREAD reply as (stream key, rows) pairs (RESP2 list or RESP3 map)."""
    if not reply:
        return []
    pairs = reply.items() if isinstance(reply, dict) else reply
    out = []
    for key, rows in pairs:
        k = key.decode() if isinstance(key, bytes) else str(key)
        out.append((k, rows[0] if isinstance(reply, dict) else rows))
    return out


@dataclass(frozen=True)
class Finished:
    """A finished game as a tournament adopts it: its result, and the header and seed reveal
    that say whose game it was (seats, ruleset, options, seed)."""

    result: GameResult
    header: Header
    reveal: SeedReveal
