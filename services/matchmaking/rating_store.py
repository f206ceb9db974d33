"""Ratings in Redis, updated once per game, always equal to the fold of the mode's games.

Keys (hash tag `{rt}`; `MODE` is a mode id):
- `{ns}:{rt}:r:MODE` — hash player -> msgpack [mu, sigma, games]
- `{ns}:{rt}:lb:MODE` — sorted set player -> ordinal (the leaderboard)
- `{ns}:{rt}:res:MODE` — hash game -> msgpack GameResult: the idempotency record and the history
- `{ns}:{rt}:ord:MODE` — sorted set game -> end time (ties by game id, as in `ratings.fold`)
- `{ns}:{rt}:base:MODE` — hash player -> msgpack rating: the fold of every game that left the
  history; `{ns}:{rt}:cut:MODE` — msgpack [end time, game id] of the newest of those games

`record` runs under WATCH on the history keys: a game already in the history changes nothing; a
game that ends after every rated one is applied on top; one that arrives late (another worker
finished it earlier but announced it later) makes the mode fold again from its base and
history, so the stored numbers never depend on the order the announcements came in.

The history is bounded (Redis memory stays flat however many games are played): it keeps the
newest `keep` games of each mode (1,000 by default); once it holds `COMPACT_EVERY` more, the
oldest are folded into the base and dropped (`compact`). The archive files stay the complete
record (`arena ratings rebuild` folds them all). A game that ends before the cut — announced
after more than `keep` newer games of its mode were rated, e.g. a matchmaker down that long —
counts as already rated: it may have been folded into the base already, and there is no
longer a record to tell; `arena ratings rebuild` counts it if it was not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import WatchError

from .ratings import GameResult, PlayerRating, apply, fold

KEEP = 1_000
"""Games of each mode the history keeps (the idempotency record and the late-arrival refold)."""
COMPACT_EVERY = 100
"""The history is compacted once it holds this many games beyond `keep` (fewer, larger folds)."""

_RESULT_DEC = msgspec.msgpack.Decoder(GameResult)
_RATING_DEC = msgspec.msgpack.Decoder(PlayerRating)
_ENC = msgspec.msgpack.Encoder()


class RatingStore:
    """Ratings per player and mode (redis-py asyncio, bytes replies)."""

    def __init__(
        self, client: aioredis.Redis, namespace: str = "arena", *, keep: int = KEEP
    ) -> None:
        self.client = client
        self.prefix = f"{namespace}:{{rt}}"
        self.keep = max(1, keep)

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

    async def games(self, mode: str) -> set[str]:
        """The ids of the games that count in `mode` (the newest `keep`, once compacted)."""
        ids: Any = await self.client.hkeys(self._key("res", mode))
        return {i.decode() for i in ids}

    async def rated(self, mode: str, game: str) -> bool:
        """Whether `game` already counts in `mode`."""
        return bool(await self.client.hexists(self._key("res", mode), game))

    async def record(self, result: GameResult) -> bool:
        """Count a finished game once; False if it was already counted (or ends before the
        history's cut: see the module doc)."""
        res, order = self._key("res", result.mode), self._key("ord", result.mode)
        ratings, board = self._key("r", result.mode), self._key("lb", result.mode)
        base, cut = self._key("base", result.mode), self._key("cut", result.mode)
        async with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(res, order, cut)
                    if await pipe.hexists(res, result.game_id):
                        return False
                    if _before_cut(await pipe.get(cut), result):
                        return False
                    humans = sorted(
                        {p for p, b in zip(result.players, result.bots, strict=True) if not b}
                    )
                    # a game that ended before one counted already is folded in order (the
                    # history again) if a later game rated one of its people; else applying it
                    # on top gives the same floats (see `_later_share_a_player`). One without a
                    # person changes no rating, wherever it falls
                    late = bool(humans) and await _later_share_a_player(pipe, order, res, result)
                    if late:
                        values: Any = await pipe.hvals(res)
                        history = [_RESULT_DEC.decode(v) for v in values]
                        start = _table(await pipe.hgetall(base))
                        table = _fold_onto(start, [*history, result])
                    else:
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
                    pipe.zcard(order)
                    kept: Any = await pipe.execute()
                    break
                except WatchError:
                    continue
        if int(kept[-1]) >= self.keep + COMPACT_EVERY:
            await self.compact(result.mode)
        return True

    async def compact(self, mode: str) -> int:
        """Fold the history's oldest games beyond `keep` into the base; returns how many."""
        res, order = self._key("res", mode), self._key("ord", mode)
        base, cut = self._key("base", mode), self._key("cut", mode)
        async with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(res, order, base, cut)
                    extra = int(await pipe.zcard(order)) - self.keep
                    if extra <= 0:
                        return 0
                    games: Any = await pipe.zrange(order, 0, extra - 1)
                    rows: Any = await pipe.hmget(res, games)
                    folded = [_RESULT_DEC.decode(r) for r in rows if r is not None]
                    table = _fold_onto(_table(await pipe.hgetall(base)), folded)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    if table:
                        pipe.hset(base, mapping={p: _ENC.encode(r) for p, r in table.items()})
                    if folded:
                        newest = max(folded, key=GameResult.order)
                        pipe.set(cut, _ENC.encode(list(newest.order())))
                    pipe.hdel(res, *games)
                    pipe.zrem(order, *games)
                    await pipe.execute()
                    return len(games)
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
        """Throw away every mode's ratings and history and store the fold of `results` (the
        newest `keep` games of each mode as its history, the fold of the rest as its base)."""
        tables = fold(results)
        stale = set(await self.modes()) | set(tables)
        by_mode: dict[str, dict[str, GameResult]] = {}
        for r in results:
            by_mode.setdefault(r.mode, {})[r.game_id] = r
        async with self.client.pipeline(transaction=True) as pipe:
            for mode in stale:
                pipe.delete(*(self._key(k, mode) for k in ("r", "lb", "res", "ord", "base", "cut")))
            for mode, table in tables.items():
                self._write(pipe, self._key("r", mode), self._key("lb", mode), table)
            for mode, games in by_mode.items():
                ordered = sorted(games.values(), key=GameResult.order)
                older, kept = ordered[: -self.keep], ordered[-self.keep :]
                if older:
                    start = _fold_onto({}, older)
                    if start:
                        pipe.hset(
                            self._key("base", mode),
                            mapping={p: _ENC.encode(x) for p, x in start.items()},
                        )
                    pipe.set(self._key("cut", mode), _ENC.encode(list(older[-1].order())))
                for r in kept:
                    pipe.hset(self._key("res", mode), r.game_id, _ENC.encode(r))
                    pipe.zadd(self._key("ord", mode), {r.game_id: r.ended_ms})
            await pipe.execute()
        return tables


async def _later_share_a_player(
    pipe: aioredis.client.Pipeline, order: str, res: str, result: GameResult
) -> bool:
    """Whether a game of the history that ends after `result` had one of its people.

    If none did, inserting `result` in its place changes no later game's inputs (each reads
    only its own players' ratings, and `result` moves only its people's), and its people's
    ratings before it are their current ones: `apply` on top equals the fold. Otherwise the
    history must be folded again. (Each late arrival used to fold the whole history, up to
    `keep + COMPACT_EVERY` games, every one through openskill: a burst of games announced out
    of order kept the matchmaker busy for seconds.)"""
    rows: Any = await pipe.zrangebyscore(order, result.ended_ms, "+inf", withscores=True)
    later = [g for g, end in rows if (int(end), g.decode()) > result.order()]
    if not later:
        return False
    people = {p for p, b in zip(result.players, result.bots, strict=True) if not b}
    found: Any = await pipe.hmget(res, later)
    for raw in found:
        if raw is None:
            continue
        other = _RESULT_DEC.decode(raw)
        if any(not b and p in people for p, b in zip(other.players, other.bots, strict=True)):
            return True
    return False


def _table(raw: Any) -> dict[str, PlayerRating]:
    return {k.decode(): _RATING_DEC.decode(v) for k, v in raw.items()}


def _fold_onto(
    start: Mapping[str, PlayerRating], results: list[GameResult]
) -> dict[str, PlayerRating]:
    """`start` with `results` (one mode's) applied in (end time, game id) order, once each."""
    table = dict(start)
    seen: set[str] = set()
    for result in sorted(results, key=GameResult.order):
        if result.game_id not in seen:
            seen.add(result.game_id)
            table.update(apply(table, result))
    return table


def _before_cut(cut: Any, result: GameResult) -> bool:
    """Whether `result` ends at or before the history's cut (msgpack [end ms, game id])."""
    if cut is None:
        return False
    end, game = msgspec.msgpack.decode(cut)
    return result.order() <= (int(end), str(game))
