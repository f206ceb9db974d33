"""What a worker keeps in Redis beside the log: each game's secret, decision deadlines, streams.

- `{ns}:{GAME}:secret` — the seed, salt and time limit, written once (SET NX) before the header,
  so any worker can rebuild the game and a crashed create can be retried with the same seed.
  It never enters the log: the header only commits to the seed, the seed reveal opens it.
- `{ns}:deadlines` — sorted set of `GAME|DECISION` by due time (ms). A human decision is due at
  its time limit (then the server answers by default); a bot decision is due a little later,
  and is then published again (its worker may have died between the append and the publish).
- streams `{ns}:matches`, `{ns}:decisions`, `{ns}:finished` (= services.eventlog.streams names
  for the default namespace "arena").
"""

from __future__ import annotations

from typing import Protocol

import msgspec
import redis.asyncio as aioredis

from ..eventlog import streams


class Secret(msgspec.Struct, frozen=True):
    """What the log must not show before the end: the seed and salt; plus the time limit."""

    seed: int
    salt: bytes
    time_limit_ms: int


class Side(Protocol):
    """The worker's Redis needs beside the EventStore."""

    namespace: str

    async def put_secret(self, game: str, secret: Secret) -> Secret:
        """Store `secret` unless one exists; return the stored one."""
        ...

    async def get_secret(self, game: str) -> Secret | None:
        """The game's secret, if stored."""
        ...

    async def drop_secret(self, game: str) -> None:
        """Forget the secret (after the game is archived)."""
        ...

    async def set_deadline(self, game: str, decision: int, at_ms: int, *, only_new: bool = False
                           ) -> bool:
        """Make `decision` of `game` due at `at_ms`; with `only_new`, keep an existing time.

        Returns whether the member was new.
        """
        ...

    async def clear_deadline(self, game: str, decision: int) -> None:
        """Forget a deadline."""
        ...

    async def due(self, now_ms: int, limit: int = 50) -> list[tuple[str, int]]:
        """Up to `limit` (game, decision) pairs due at `now_ms`."""
        ...

    async def pending_count(self) -> int:
        """How many decisions have a deadline (= are pending)."""
        ...

    async def publish(self, stream: str, fields: dict[str, str | int | bytes]) -> None:
        """Append a message to `{ns}:{stream}`."""
        ...


def _member(game: str, decision: int) -> str:
    return f"{game}|{decision}"


def _parse(member: bytes | str) -> tuple[str, int]:
    text = member.decode() if isinstance(member, bytes) else member
    game, _, decision = text.rpartition("|")
    return game, int(decision)


class RedisSide:
    """Side on Redis (redis-py asyncio, bytes replies)."""

    def __init__(self, client: aioredis.Redis, namespace: str = "arena") -> None:
        self.client = client
        self.namespace = namespace
        self.deadlines = f"{namespace}:deadlines"

    def _secret_key(self, game: str) -> str:
        return f"{self.namespace}:{{{game}}}:secret"

    def stream(self, name: str) -> str:
        """The full key of shared stream `name` (matches, decisions, finished)."""
        return f"{self.namespace}:{name}"

    async def put_secret(self, game: str, secret: Secret) -> Secret:
        """See Side.put_secret."""
        key = self._secret_key(game)
        await self.client.set(key, msgspec.msgpack.encode(secret), nx=True)
        stored = await self.get_secret(game)
        assert stored is not None
        return stored

    async def get_secret(self, game: str) -> Secret | None:
        """See Side.get_secret."""
        data = await self.client.get(self._secret_key(game))
        return None if data is None else msgspec.msgpack.decode(_raw(data), type=Secret)

    async def drop_secret(self, game: str) -> None:
        """See Side.drop_secret."""
        await self.client.delete(self._secret_key(game))

    async def set_deadline(self, game: str, decision: int, at_ms: int, *, only_new: bool = False
                           ) -> bool:
        """See Side.set_deadline."""
        added = await self.client.zadd(self.deadlines, {_member(game, decision): at_ms},
                                       nx=only_new)
        return bool(added)

    async def clear_deadline(self, game: str, decision: int) -> None:
        """See Side.clear_deadline."""
        await self.client.zrem(self.deadlines, _member(game, decision))

    async def due(self, now_ms: int, limit: int = 50) -> list[tuple[str, int]]:
        """See Side.due."""
        rows = await self.client.zrangebyscore(self.deadlines, "-inf", now_ms, start=0, num=limit)
        return [_parse(_raw(m)) for m in rows]

    async def pending_count(self) -> int:
        """See Side.pending_count."""
        return int(await self.client.zcard(self.deadlines))

    async def publish(self, stream: str, fields: dict[str, str | int | bytes]) -> None:
        """See Side.publish."""
        await streams.publish(self.client, self.stream(stream), fields)


class MemorySide:
    """Side in memory, for tests without Redis; `published` records every message."""

    def __init__(self, namespace: str = "arena") -> None:
        self.namespace = namespace
        self.secrets: dict[str, Secret] = {}
        self.deadlines: dict[str, int] = {}
        self.published: list[tuple[str, dict[str, str | int | bytes]]] = []

    async def put_secret(self, game: str, secret: Secret) -> Secret:
        """See Side.put_secret."""
        return self.secrets.setdefault(game, secret)

    async def get_secret(self, game: str) -> Secret | None:
        """See Side.get_secret."""
        return self.secrets.get(game)

    async def drop_secret(self, game: str) -> None:
        """See Side.drop_secret."""
        self.secrets.pop(game, None)

    async def set_deadline(self, game: str, decision: int, at_ms: int, *, only_new: bool = False
                           ) -> bool:
        """See Side.set_deadline."""
        m = _member(game, decision)
        new = m not in self.deadlines
        if new or not only_new:
            self.deadlines[m] = at_ms
        return new

    async def clear_deadline(self, game: str, decision: int) -> None:
        """See Side.clear_deadline."""
        self.deadlines.pop(_member(game, decision), None)

    async def due(self, now_ms: int, limit: int = 50) -> list[tuple[str, int]]:
        """See Side.due."""
        rows = sorted((t, m) for m, t in self.deadlines.items() if t <= now_ms)
        return [_parse(m) for _, m in rows[:limit]]

    async def pending_count(self) -> int:
        """See Side.pending_count."""
        return len(self.deadlines)

    async def publish(self, stream: str, fields: dict[str, str | int | bytes]) -> None:
        """See Side.publish."""
        self.published.append((stream, dict(fields)))


def _raw(value: object) -> bytes:
    """A Redis reply as bytes (the client is created without decode_responses)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"unexpected Redis reply {value!r}")
