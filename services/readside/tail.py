"""Reading a game's log live, as every tail does (the web server's feeds, GameService's streams).

The engine archives a finished game and deletes its live log at once, so a game's last entries
and that deletion can fall between two reads of a tail: the tail then blocks on a stream that
no longer exists. So after an empty read the tail asks whether the log is gone, and reads the
rest from the archive file (the archive keeps no append times: those entries are released as
first seen, never early).

On one Redis, the feeds of a process wait together (`Tails`): one blocking XREAD names every
game a feed waits on, instead of one XREAD per game, each holding a connection of the pool for
its whole wait. With a hundred people at their tables the web server's hundred waiting feeds
held every connection of its pool (100), and every other command (a session, an answer) waited
seconds for one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol

from ..eventlog.catalog import archived_after
from ..eventlog.store import EventStore, TimedRecord

MANY_BLOCK_MS = 100
"""How long the shared XREAD blocks: a game that starts waiting meanwhile (a new feed) is named
in the next one, so its first live entry may wait that long at most. A feed waiting again after
its entries (the usual case) is named in the next read already (`Tails`)."""


class TailsMany(Protocol):
    """A store that reads the new entries of several games in one blocking call."""

    async def tail_many(
        self, afters: dict[str, int], block_ms: int
    ) -> dict[str, list[TimedRecord]]:
        """The entries after each game's seq, for the games that have any (waiting up to
        ``block_ms`` for one)."""
        ...


class Tails:
    """The waits of every feed of a process, one blocking read for all (module docstring).

    A waiter names its game and seq (`wait`) and gets that game's new entries, or none once its
    own ``block_ms`` has passed. A loop runs while anyone waits: one `tail_many` naming every
    waiting game, the entries handed out, then a turn of the event loop so that the feeds that
    got entries wait again before the next read names the games."""

    def __init__(self, store: TailsMany, block_ms: int = MANY_BLOCK_MS) -> None:
        self.store, self.block_ms = store, block_ms
        Waiter = tuple[int, asyncio.Future[list[TimedRecord]]]  # (its seq, its entries)
        self.waiting: dict[str, list[Waiter]] = {}
        self._task: asyncio.Task[None] | None = None
        self.reads = 0  # tail_many calls (for tests and benchmarks)

    async def wait(self, game: str, after: int, block_ms: int) -> list[TimedRecord]:
        """The entries of ``game`` after seq ``after`` appended within ``block_ms``."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[TimedRecord]] = loop.create_future()
        me = (after, fut)
        self.waiting.setdefault(game, []).append(me)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())
        expiry = loop.call_later(block_ms / 1000, _nothing, fut)  # (no task: one wake-up)
        try:
            return await fut
        finally:
            expiry.cancel()
            waiters = self.waiting.get(game)
            if waiters is not None and me in waiters:
                waiters.remove(me)
                if not waiters:
                    del self.waiting[game]

    async def _run(self) -> None:
        while self.waiting:
            afters = {
                game: min(a for a, f in w if not f.done())
                for game, w in self.waiting.items()
                if not all(f.done() for _, f in w)
            }
            if not afters:
                await asyncio.sleep(0)
                continue
            self.reads += 1
            try:
                got = await self.store.tail_many(afters, self.block_ms)
            except Exception as exc:  # noqa: BLE001 - every waiter gets the error, and retries
                for waiters in self.waiting.values():
                    for _, fut in waiters:
                        if not fut.done():
                            fut.set_exception(exc)
                return
            for game, rows in got.items():
                for after, fut in self.waiting.get(game, ()):
                    mine = [row for row in rows if row[0] > after]
                    if mine and not fut.done():
                        fut.set_result(mine)
            await asyncio.sleep(0)  # the feeds that got entries wait again before the next read


def _nothing(fut: asyncio.Future[list[TimedRecord]]) -> None:
    if not fut.done():
        fut.set_result([])


async def read_on(
    store: EventStore,
    game: str,
    after: int,
    block_ms: int,
    archive_dir: Path | None,
    tails: Tails | None = None,
) -> tuple[list[TimedRecord], bool]:
    """(the entries of ``game`` after seq ``after`` appended within ``block_ms``, whether the
    live log is gone). A gone log's rest comes from its archive file in ``archive_dir``, with no
    append time; none if there is no file yet (or no folder): the caller may ask again. With
    ``tails``, the wait is shared with the process's other feeds."""
    if tails is not None:
        rows = await tails.wait(game, after, block_ms)
    else:
        rows = await store.tail_timed(game, after, block_ms)
    if rows or await store.head(game):
        return rows, False
    rest = await archived_after(archive_dir, game, after)
    return [(seq, data, None) for seq, data in rest], True
