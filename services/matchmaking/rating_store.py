"""Ratings in Redis, updated once per game, always equal to the fold of the mode's games.

Keys (hash tag `{rt}`; `MODE` is a mode id):
- `{ns}:{rt}:r:MODE` — hash player -> msgpack [mu, sigma, games]
- `{ns}:{rt}:lb:MODE` — sorted set player -> ordinal (the leaderboard)
- `{ns}:{rt}:res:MODE` — hash game -> msgpack GameResult: the idempotency record and the history
- `{ns}:{rt}:ord:MODE` — sorted set game -> end time (ties by game id, as in `ratings.fold`)

`record` runs under WATCH on the history keys: a game already in the history changes nothing; a
game that ends after every rated one is applied on top; one that arrives late (another worker
finished it earlier but announced it later) makes the mode fold again from its history, so the
stored numbers never depend on the order the announcements came in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import WatchError

from .ratings import GameResult, PlayerRating, apply, fold

_RESULT_DEC = msgspec.msgpack.Decoder(GameResult)
_RATING_DEC = msgspec.msgpack.Decoder(PlayerRating)
_ENC = msgspec.msgpack.Encoder()


class RatingStore:
    """Ratings per player and mode (redis-py asyncio, bytes replies)."""

    def __init__(self, client: aioredis.Redis, namespace: str = "arena") -> None:
        self.client = client
        self.prefix = f"{namespace}:{{rt}}"

    def _key(self, kind: str, mode: str) -> str:
        return f"{self.prefix}:{kind}:{mode}"

    async def get(self, mode: str, player: str) -> PlayerRating | None:
        """A player's rating in `mode`, if rated."""
        data: Any = await self.client.hget(self._key("r", mode), player)
        return None if data is None else _RATING_DEC.decode(data)

    async def table(self, mode: str) -> dict[str, PlayerRating]:
        """Every rating of a mode."""
        raw: Any = await self.client.hgetall(self._key("r", mode))
        return {k.decode(): _RATING_DEC.decode(v) for k, v in raw.items()}

    async def modes(self) -> list[str]:
        """The modes that have ratings or rated games."""
        out = set()
        async for key in self.client.scan_iter(match=f"{self.prefix}:*", count=1000):
            out.add(key.decode().rsplit(":", 1)[1])
        return sorted(out)

    async def leaderboard(
        self, mode: str, offset: int = 0, limit: int = 50
    ) -> list[tuple[str, PlayerRating]]:
        """Players by ordinal, best first."""
        names: Any = await self.client.zrevrange(self._key("lb", mode), offset, offset + limit - 1)
        if not names:
            return []
        rows: Any = await self.client.hmget(self._key("r", mode), names)
        return [
            (n.decode(), _RATING_DEC.decode(r))
            for n, r in zip(names, rows, strict=True)
            if r is not None
        ]

    async def rated(self, mode: str, game: str) -> bool:
        """Whether `game` already counts in `mode`."""
        return bool(await self.client.hexists(self._key("res", mode), game))

    async def record(self, result: GameResult) -> bool:
        """Count a finished game once; False if it was already counted."""
        res, order = self._key("res", result.mode), self._key("ord", result.mode)
        ratings, board = self._key("r", result.mode), self._key("lb", result.mode)
        async with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(res, order)
                    if await pipe.hexists(res, result.game_id):
                        return False
                    last: Any = await pipe.zrange(order, -1, -1, withscores=True)
                    late = bool(last) and (int(last[0][1]), last[0][0].decode()) > result.order()
                    if late:
                        values: Any = await pipe.hvals(res)
                        history = [_RESULT_DEC.decode(v) for v in values]
                        table = fold([*history, result]).get(result.mode, {})
                    else:
                        humans = sorted(
                            {p for p, b in zip(result.players, result.bots, strict=True) if not b}
                        )
                        rows: Any = await pipe.hmget(ratings, humans) if humans else []
                        current = {
                            p: _RATING_DEC.decode(r)
                            for p, r in zip(humans, rows, strict=True)
                            if r is not None
                        }
                        table = apply(current, result)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    if late:
                        pipe.delete(ratings, board)
                    self._write(pipe, ratings, board, table)
                    pipe.hset(res, result.game_id, _ENC.encode(result))
                    pipe.zadd(order, {result.game_id: result.ended_ms})
                    await pipe.execute()
                    return True
                except WatchError:
                    continue

    @staticmethod
    def _write(
        pipe: aioredis.client.Pipeline, ratings: str, board: str, table: Mapping[str, PlayerRating]
    ) -> None:
        if table:
            pipe.hset(ratings, mapping={p: _ENC.encode(r) for p, r in table.items()})
            pipe.zadd(board, {p: r.ordinal for p, r in table.items()})

    async def replace(self, results: list[GameResult]) -> dict[str, dict[str, PlayerRating]]:
        """Throw away every mode's ratings and history and store the fold of `results`."""
        tables = fold(results)
        stale = set(await self.modes()) | set(tables)
        async with self.client.pipeline(transaction=True) as pipe:
            for mode in stale:
                pipe.delete(*(self._key(k, mode) for k in ("r", "lb", "res", "ord")))
            for mode, table in tables.items():
                self._write(pipe, self._key("r", mode), self._key("lb", mode), table)
            for r in results:
                pipe.hset(self._key("res", r.mode), r.game_id, _ENC.encode(r))
                pipe.zadd(self._key("ord", r.mode), {r.game_id: r.ended_ms})
            await pipe.execute()
        return tables
