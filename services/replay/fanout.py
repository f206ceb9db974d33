"""SSE fan-out: one stream of bytes per game and kind of viewer, written to every subscriber.

Every spectator of a game with the same grant (viewer and delay) is sent the same bytes: the
entries redacted for that viewer, released at the same times, and the same public decisions. So
one :class:`Channel` per (game, viewer, delay) takes the updates from one :class:`Cursor`, builds
each SSE chunk once and writes it to every subscriber's socket, instead of a coroutine, a task
and a drain per spectator per entry (which made 1,000 spectators 31x slower than a raw XREAD).

A subscriber joins at the entry it already holds: what the channel sent before that is written
to it first (catch-up), in the same step as it joins, so it sees every entry exactly once. A
subscriber whose socket does not keep up (more than ``SLOW_BYTES`` unsent) leaves the channel
and goes on alone from where it was (the caller's per-connection stream), so one slow reader
never holds the others back nor makes the server buffer without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from ..readside.access import Grant
from ..readside.feed import Cursor, GameFeed, Update
from .core import Replay

SLOW_BYTES = 256 * 1024
KEEPALIVE_S = 15.0
Key = tuple[str, int, int]  # game, viewer, delay_ms


def sse_chunk(update: Update) -> bytes:
    """The SSE bytes of one update: an ``id:`` event per entry, then the decision if any."""
    batch, decision = update
    out = b"".join(b"id: %d\ndata: %s\n\n" % (s, e) for s, e in batch)
    if decision is not None:  # no id: Last-Event-ID stays the last entry's position
        out += b"event: decision\ndata: %s\n\n" % decision
    return out


END = b"event: end\ndata: {}\n\n"


@dataclass(eq=False)
class Subscriber:
    """One SSE connection on a channel. ``done`` is set when it leaves: ``reason`` "end" (the
    log is complete and ``event: end`` was written), "slow" (it fell behind; carry on alone
    from ``after``), or "closed" (the connection is gone, or the server stops)."""

    writer: asyncio.StreamWriter
    after: int
    sent: bytes | None = None
    reason: str = ""
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def leave(self, reason: str) -> None:
        """Mark why it left and wake its handler."""
        if not self.reason:
            self.reason = reason
            self.done.set()


Counter = Callable[[int, int], None]
"""Called after each write to ``n`` subscribers with (entries, decisions) sent to each."""


class Channel:
    """One game's stream for one grant, written to all its subscribers."""

    def __init__(
        self, replay: Replay, feed: GameFeed, grant: Grant, after: int, count: Counter
    ) -> None:
        self.replay = replay
        self.cursor = Cursor(feed, grant, after, show=True)  # (a delayed grant shows none)
        self.subs: list[Subscriber] = []
        self.count = count
        self.task: asyncio.Task[None] | None = None

    def join(self, writer: asyncio.StreamWriter, after: int) -> Subscriber | None:
        """Add a connection that holds entries up to ``after``; None if it is ahead of the
        channel (it streams alone). Its catch-up is written now, in the same step."""
        cur = self.cursor
        if after > cur.after:
            return None
        # log seqs here (as the cursor's); what is written carries the viewer's positions
        catch_up = cur.feed.batch(cur.grant.viewer, after, cur.after)
        if catch_up or cur.sent is not None:
            writer.write(sse_chunk((catch_up, cur.sent)))
        sub = Subscriber(writer, cur.after, cur.sent)
        self.subs.append(sub)
        return sub

    async def run(self, on_stop: Callable[[], None]) -> None:
        """Take updates and write them to every subscriber until the log ends or none is left."""
        cur, feed = self.cursor, self.cursor.feed
        feed.watchers += 1
        try:
            while self.subs:
                update = cur.take(self.replay.clock.now_ms())
                if update is not None:
                    self._write(sse_chunk(update), len(update[0]), update[1] is not None)
                elif cur.finished:
                    self._write(END, 0, False)
                    for sub in self.subs:
                        sub.leave("end")
                    self.subs = []
                    return
                else:
                    try:  # not wait_for: its task would start a step late and miss a wake-up
                        async with asyncio.timeout(KEEPALIVE_S):
                            await self.replay.wait(cur)
                    except TimeoutError:
                        self._write(b": keep-alive\n\n", 0, False)
        finally:
            feed.watchers -= 1
            feed.last_used = self.replay.clock.now_ms()
            on_stop()
            for sub in self.subs:
                sub.leave("closed")

    def _write(self, chunk: bytes, entries: int, decision: bool) -> None:
        cur = self.cursor
        keep = []
        for sub in self.subs:
            transport = sub.writer.transport
            if sub.reason:  # its handler is gone
                continue
            if transport.is_closing():
                sub.leave("closed")
                continue
            sub.writer.write(chunk)
            sub.after, sub.sent = cur.after, cur.sent
            if transport.get_write_buffer_size() > SLOW_BYTES:
                sub.leave("slow")
                continue
            keep.append(sub)
        self.count(entries * len(self.subs), int(decision) * len(self.subs))
        self.subs = keep


class Fanout:
    """The channels of one server process, by (game, viewer, delay)."""

    def __init__(self, replay: Replay, count: Counter) -> None:
        self.replay = replay
        self.count = count
        self.channels: dict[Key, Channel] = {}

    def subscribe(
        self, feed: GameFeed, grant: Grant, after: int, writer: asyncio.StreamWriter
    ) -> Subscriber | None:
        """Join ``writer`` to the channel of its grant (made if there is none); None if it must
        stream alone (it holds entries the channel has not reached)."""
        key = (feed.game, grant.viewer, grant.delay_ms)
        ch = self.channels.get(key)
        if ch is None or ch.task is None or ch.task.done() or ch.cursor.feed is not feed:
            ch = Channel(self.replay, feed, grant, after, self.count)
            self.channels[key] = ch
            sub = ch.join(writer, after)
            ch.task = asyncio.create_task(ch.run(lambda: self._drop(key, ch)))
            return sub
        return ch.join(writer, after)

    def _drop(self, key: Key, ch: Channel) -> None:
        if self.channels.get(key) is ch:
            del self.channels[key]

    async def close(self) -> None:
        """Stop every channel (their subscribers leave as "closed")."""
        tasks = [ch.task for ch in self.channels.values() if ch.task is not None]
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await t
