"""Time for the spectator delay, behind a port so tests control it instead of sleeping."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol


class Clock(Protocol):
    """Milliseconds since the epoch, and a way to wait for a moment."""

    def now_ms(self) -> int:
        """The current time."""
        ...

    async def sleep_until(self, t_ms: int) -> None:
        """Return once ``now_ms() >= t_ms``."""
        ...


class SystemClock:
    """The wall clock."""

    def now_ms(self) -> int:
        """See Clock.now_ms."""
        return int(time.time() * 1000)

    async def sleep_until(self, t_ms: int) -> None:
        """See Clock.sleep_until."""
        while (left := t_ms - self.now_ms()) > 0:
            await asyncio.sleep(left / 1000)


class ManualClock:
    """A clock that moves only when told to (``advance``); sleepers wake when their time comes."""

    def __init__(self, start_ms: int = 1_000_000) -> None:
        self._now = start_ms
        self._moved = asyncio.Event()

    def now_ms(self) -> int:
        """See Clock.now_ms."""
        return self._now

    async def sleep_until(self, t_ms: int) -> None:
        """See Clock.sleep_until."""
        while self._now < t_ms:
            moved = self._moved
            await moved.wait()

    def advance(self, ms: int) -> None:
        """Move time forward and wake every sleeper (each re-checks its own deadline)."""
        self._now += ms
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()


class ServerClock:
    """The wall clock set to the Redis server's: entries are stamped with Redis TIME, so the
    delay must be measured on that clock, or a replay host whose clock runs ahead would release
    entries early. ``sync`` measures the offset; the estimate is the lowest consistent with the
    round trip, so this clock never runs ahead of the server's (a delay is never cut short)."""

    def __init__(self, redis_time: Callable[[], Awaitable[tuple[int, int]]]) -> None:
        self._redis_time = redis_time
        self.offset_ms = 0.0

    async def sync(self) -> None:
        """Measure the offset once (call at start and every minute or so)."""
        seconds, micros = await self._redis_time()
        after = time.time() * 1000
        self.offset_ms = seconds * 1000 + micros / 1000 - after

    def now_ms(self) -> int:
        """See Clock.now_ms."""
        return int(time.time() * 1000 + self.offset_ms)

    async def sleep_until(self, t_ms: int) -> None:
        """See Clock.sleep_until."""
        while (left := t_ms - self.now_ms()) > 0:
            await asyncio.sleep(left / 1000)
