"""A game's entries as this server has seen them: one reader per game, any number of watchers.

A ``GameFeed`` holds the stored entries of one game, the time this server first saw each one,
and a task tailing the log (``EventStore.tail``) while the game is live. Every SSE or gRPC
watcher of the game waits on the feed instead of reading Redis itself, so a thousand spectators
cost one XREAD, and each entry is redacted and encoded once per kind of viewer.

Seen-at, not appended-at: the stream id is ``SEQ-0`` and entries carry no timestamp, so the
delay counts from the moment this server first read an entry. That is never earlier than the
append, so a delayed spectator is never early; it may be late by the tail latency, and after a
restart entries already in the log are held back once more. (An append timestamp in the entry
would make the delay exact and equal across replicas: see README.md.)
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
from collections.abc import Awaitable, Callable

from ..eventlog.store import EventStore
from .clock import Clock
from .envelope import envelope, is_terminal

log = logging.getLogger(__name__)
TAIL_BLOCK_MS = 5_000


class GameFeed:
    """Entries of one game, first-seen times, and change notification."""

    def __init__(self, game: str, clock: Clock) -> None:
        self.game = game
        self.clock = clock
        self.records: list[bytes] = []
        self.seen_ms: list[int] = []
        self.over = False  # game_ended or the seed reveal is in: nothing is secret any more
        self.closed = False  # the seed reveal is in: no entry will follow
        self.watchers = 0
        self.last_used = clock.now_ms()
        self._changed = asyncio.Event()
        self._cache: dict[int, list[bytes | None]] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def version(self) -> int:
        """The last sequence number seen."""
        return len(self.records)

    def add(self, records: list[tuple[int, bytes]], seen_ms: int) -> None:
        """Take newly read records (ignoring any already held) and wake the watchers."""
        for seq, data in records:
            if seq != len(self.records) + 1:
                continue
            self.records.append(data)
            self.seen_ms.append(seen_ms)
            over, closed = is_terminal(data)
            self.over, self.closed = self.over or over, self.closed or closed
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def released(self, delay_ms: int, now_ms: int) -> int:
        """The last sequence number a watcher ``delay_ms`` behind may have at ``now_ms``."""
        if delay_ms <= 0:
            return len(self.records)
        return bisect.bisect_right(self.seen_ms, now_ms - delay_ms)

    def envelope(self, seq: int, viewer: int) -> bytes | None:
        """Entry ``seq`` as ``viewer`` receives it (cached per viewer)."""
        cache = self._cache.setdefault(viewer, [])
        while len(cache) < seq:
            n = len(cache) + 1
            cache.append(envelope(n, self.records[n - 1], viewer))
        return cache[seq - 1]

    async def wait_beyond(self, after: int) -> None:
        """Return once an entry after ``after`` is held, or the log is complete."""
        while len(self.records) <= after and not self.closed:
            await self._changed.wait()

    def tail(self, store: EventStore, idle_ms: int, on_stop: Callable[[], None]) -> None:
        """Keep reading new entries in the background until the game closes or sits unwatched."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._tail(store, idle_ms, on_stop))

    async def _tail(self, store: EventStore, idle_ms: int, on_stop: Callable[[], None]) -> None:
        try:
            while not self.closed:
                if not self.watchers and self.clock.now_ms() - self.last_used > idle_ms:
                    break
                try:
                    got = await store.tail(self.game, len(self.records), TAIL_BLOCK_MS)
                except Exception:  # Redis restarting: keep the watchers, retry shortly
                    log.exception("tailing game %s", self.game)
                    await asyncio.sleep(1)
                    continue
                if got:
                    self.add(got, self.clock.now_ms())
        finally:
            on_stop()

    async def stop(self) -> None:
        """Cancel the tail task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


Loader = Callable[[str], Awaitable[GameFeed | None]]
