"""In-memory EventStore: the adapter pure tests and single-process tools use."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from .store import Record, Snapshot, TimedRecord, VersionConflict, check_game_id


def _wall_ms() -> int:
    return int(time.time() * 1000)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class InMemoryEventStore:
    """EventStore kept in a dict; safe for any number of tasks on one event loop.

    Appends never await between the version check and the write, so under asyncio they are
    atomic exactly like the Redis script is atomic on the server. Append times come from
    `clock` (ms since the epoch; the wall clock by default), read once per batch.
    """

    def __init__(self, clock: Callable[[], int] | None = None) -> None:
        self.clock = clock or _wall_ms
        self._logs: dict[str, list[bytes]] = {}
        self._times: dict[str, list[int]] = {}
        self._snapshots: dict[str, Snapshot] = {}
        # the tails waiting on each game: a plain future each, woken by the next append. (An
        # asyncio.Condition under asyncio.wait_for could swallow a tail's cancellation on
        # Python 3.11, and a read side's close then waited for its feed's idle time: 60 s.)
        self._tails: dict[str, set[asyncio.Future[None]]] = {}

    async def append(self, game: str, expected_version: int, records: Sequence[bytes]) -> int:
        """See EventStore.append."""
        log = self._logs.get(game)  # (a game with a log has a valid id: checked once)
        if log is None:
            log = self._logs.setdefault(check_game_id(game), [])
        if len(log) != expected_version:
            raise VersionConflict(game, expected_version, len(log))
        if records:
            log.extend(map(bytes, records))  # (bytes of a bytes is itself: no copy)
            self._times.setdefault(game, []).extend([self.clock()] * len(records))
            for waiter in self._tails.pop(game, ()):  # (only a game someone tails)
                if not waiter.done():
                    waiter.set_result(None)
        return len(log)

    async def read(self, game: str, after: int = 0, upto: int | None = None) -> list[Record]:
        """See EventStore.read."""
        log = self._logs.get(check_game_id(game), [])
        end = len(log) if upto is None else max(0, min(upto, len(log)))
        start = max(0, after)
        return list(zip(range(start + 1, end + 1), log[start:end], strict=True))  # no loop

    async def read_timed(
        self, game: str, after: int = 0, upto: int | None = None
    ) -> list[TimedRecord]:
        """See EventStore.read_timed."""
        times = self._times.get(game, [])
        return [(seq, data, times[seq - 1]) for seq, data in await self.read(game, after, upto)]

    async def tail(self, game: str, after: int, block_ms: int) -> list[Record]:
        """See EventStore.tail."""
        return [(seq, data) for seq, data, _ in await self.tail_timed(game, after, block_ms)]

    async def tail_timed(self, game: str, after: int, block_ms: int) -> list[TimedRecord]:
        """See EventStore.tail_timed."""
        records = await self.read_timed(game, after)
        if records or block_ms <= 0:
            return records
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._tails.setdefault(game, set()).add(waiter)
        expiry = loop.call_later(block_ms / 1000, _wake, waiter)
        try:
            await waiter
        finally:
            expiry.cancel()
            waiting = self._tails.get(game)
            if waiting is not None:
                waiting.discard(waiter)
                if not waiting:
                    del self._tails[game]
        return await self.read_timed(game, after)

    async def head(self, game: str) -> int:
        """See EventStore.head."""
        return len(self._logs.get(check_game_id(game), []))

    async def save_snapshot(self, game: str, snapshot: Snapshot) -> bool:
        """See EventStore.save_snapshot."""
        if snapshot.version > await self.head(game):
            raise ValueError(f"snapshot at {snapshot.version} is beyond the head of {game!r}")
        old = self._snapshots.get(game)
        if old is not None and old.version >= snapshot.version:
            return False
        self._snapshots[game] = snapshot
        return True

    async def load_snapshot(self, game: str) -> Snapshot | None:
        """See EventStore.load_snapshot."""
        return self._snapshots.get(check_game_id(game))

    async def delete(self, game: str) -> None:
        """See EventStore.delete."""
        self._logs.pop(check_game_id(game), None)
        self._times.pop(game, None)
        self._snapshots.pop(game, None)
