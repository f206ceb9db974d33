"""A game's entries as this server has seen them: one reader per game, any number of watchers.

A ``GameFeed`` holds the stored entries of one game, the time each was appended, and a task
tailing the log (``EventStore.tail_timed``) while the game is live. Every SSE or gRPC watcher of
the game waits on the feed instead of reading Redis itself, so a thousand spectators cost one
XREAD, and each entry is redacted and encoded once per kind of viewer.

Release times (``at_ms``) are the append times the store keeps beside each entry (Redis: the
server's TIME in the append script), so a delayed spectator is held exactly the delay behind the
append, the same on every replica and after a restart. An entry without one (written before
stores kept times) falls back to the moment this server first read it: never earlier than the
append, so never early. The list is kept non-decreasing (a time earlier than the one before it,
from a server clock that stepped back, is raised to it), which only ever holds entries longer.

With a decision source (decisions.py), the feed also asks for the pending decision after each
new batch, one request at a time, and wakes the watchers when it changes.

Watchers are sent each viewer's own positions (eventlog/positions.py), never the log's seqs:
the feed works in seqs and translates at the edge (`envelope`, `decision_for`), so a gap never
counts the answers withheld from a viewer.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
from collections.abc import Awaitable, Callable

from ..eventlog.entry import EVENT, decode_entry
from ..eventlog.reconnect import Backoff, is_outage
from ..eventlog.store import EventStore, TimedRecord
from ..readside.clock import Clock
from ..readside.positions import Positions, answer_seat
from ..rules import api
from .decisions import DecisionSource, Pending, decision_json, is_public
from .envelope import OpaqueId, envelope, is_terminal

log = logging.getLogger(__name__)
# well under redis-py's default socket timeout (5 s since redis-py 8): an XREAD blocking as long
# as the read timeout races it, and each lost race cost a logged error and a second's pause
# (found when a game waited on a person for longer than the block)
TAIL_BLOCK_MS = 2_000

Archived = Callable[[str, int], Awaitable[list[TimedRecord]]]
"""The entries of a game after a seq, read from its archive file ([] when it has none)."""


class GameFeed:
    """Entries of one game, their release times, the pending decision, change notification."""

    def __init__(
        self,
        game: str,
        clock: Clock,
        decisions: DecisionSource | None = None,
        opaque: OpaqueId | None = None,
        archived: Archived | None = None,
    ) -> None:
        self.game = game
        self.clock = clock
        self.decisions = decisions
        self.opaque = opaque  # a seat's answers name their decisions by these ids (envelope.py)
        self.archived = archived  # the entries after a seq from the game's archive, if any
        self.records: list[bytes] = []
        self.at_ms: list[int] = []  # append time (else first seen), non-decreasing
        self.positions = Positions()  # each viewer's position of each entry (eventlog.positions)
        self.pending: Pending | None = None  # as the decision source last said
        self._public: tuple[Pending, bool] | None = None  # the last pending, and if public
        self._dirty = asyncio.Event()
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

    def add(self, records: list[TimedRecord], seen_ms: int) -> None:
        """Take newly read records (ignoring any already held) and wake the watchers; a record's
        release time is its append time, else ``seen_ms``."""
        for seq, data, t in records:
            if seq != len(self.records) + 1:
                continue
            at = seen_ms if t is None else t
            self.records.append(data)
            self.at_ms.append(max(at, self.at_ms[-1]) if self.at_ms else at)
            self.positions.add(seq, answer_seat(decode_entry(data)))
            over, closed = is_terminal(data)
            self.over, self.closed = self.over or over, self.closed or closed
        self._dirty.set()
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def released(self, delay_ms: int, now_ms: int) -> int:
        """The last sequence number a watcher ``delay_ms`` behind may have at ``now_ms``."""
        if delay_ms <= 0:
            return len(self.records)
        return bisect.bisect_right(self.at_ms, now_ms - delay_ms)

    def spectator_version(self, delay_ms: int, now_ms: int) -> int:
        """How many entries a spectator ``delay_ms`` behind has been sent at ``now_ms`` (its
        position: the answers withheld from it are not counted). Once the game is over nothing
        is held back."""
        seq = len(self.records) if self.over else self.released(delay_ms, now_ms)
        return self.positions.position(api.SPECTATOR, seq)

    def active_seat(self, version: int) -> int:
        """The seat whose turn it is after entry ``version`` (-1 before the first turn)."""
        for data in reversed(self.records[:version]):
            entry = decode_entry(data)
            if entry.kind == EVENT and b"turn_started" in entry.payload:
                event = api.decode_event(entry.payload)
                if type(event).__struct_config__.tag == "turn_started":
                    return int(getattr(event, "seat"))  # noqa: B009
        return -1

    def decision_for(self, version: int, viewer: int = api.SPECTATOR) -> bytes | None:
        """The public part of the decision pending right after entry ``version`` (None: nothing
        pending, not known yet, or not public: see decisions.py), its version in ``viewer``'s
        positions. The source's decision is a spectator's (its version a spectator position),
        so it belongs to every entry up to the next one a spectator receives."""
        p = self.pending
        if p is None or version > len(self.records) or self.over:
            return None
        if p.version != self.positions.position(api.SPECTATOR, version):
            return None
        if self._public is None or self._public[0] != p:
            self._public = (p, is_public(p, self.active_seat(version)))
        if not self._public[1]:
            return None
        return decision_json(p, self.positions.position(viewer, version))

    async def _ask_decisions(self, source: DecisionSource) -> None:
        """Ask for the pending decision whenever entries arrive (one request at a time;
        entries arriving during a request cause one more)."""
        backoff = 0.5
        while not self.closed:
            await self._dirty.wait()
            self._dirty.clear()
            if self.over:
                continue
            try:
                p = await source.pending(self.game)
            except Exception as exc:  # noqa: BLE001 - engine away: no decision, try again
                log.debug("pending decision of %s: %s", self.game, exc)
                self._dirty.set()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 10.0)
                continue
            backoff = 0.5
            if p != self.pending:
                self.pending = p
                self._wake()

    def envelope(self, seq: int, viewer: int) -> bytes | None:
        """Entry ``seq`` as ``viewer`` receives it, numbered by its position (cached per
        viewer)."""
        cache = self._cache.setdefault(viewer, [])
        while len(cache) < seq:
            n = len(cache) + 1
            at = self.positions.position(viewer, n)
            cache.append(envelope(at, self.records[n - 1], viewer, self.opaque))
        return cache[seq - 1]

    async def wait_beyond(self, after: int, any_change: bool = False) -> None:
        """Return once an entry after ``after`` is held, or the log is complete (or, with
        ``any_change``, once anything changed: a new pending decision, say)."""
        while len(self.records) <= after and not self.closed:
            await self._changed.wait()
            if any_change:
                return

    def tail(self, store: EventStore, idle_ms: int, on_stop: Callable[[], None]) -> None:
        """Keep reading new entries in the background until the game closes or sits unwatched."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._tail(store, idle_ms, on_stop))

    async def _tail(self, store: EventStore, idle_ms: int, on_stop: Callable[[], None]) -> None:
        asking = None
        if self.decisions is not None:
            self._dirty.set()
            asking = asyncio.create_task(self._ask_decisions(self.decisions))
        backoff = Backoff(0.2, 2.0)
        try:
            while not self.closed:
                if not self.watchers and self.clock.now_ms() - self.last_used > idle_ms:
                    break
                try:
                    got = await store.tail_timed(self.game, len(self.records), TAIL_BLOCK_MS)
                    gone = not got and self.archived is not None and not await store.head(self.game)
                except Exception as exc:  # Redis restarting: keep the watchers, retry shortly
                    if not is_outage(exc):
                        log.exception("tailing game %s", self.game)
                    await backoff.sleep()  # (quietly: every feed would say so)
                    continue
                backoff.reset()
                if got:
                    self.add(got, self.clock.now_ms())
                elif gone:
                    await self._from_archive()
        finally:
            if asking is not None:
                asking.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asking
            on_stop()

    async def _from_archive(self) -> None:
        """The live log is gone while this feed still waits for entries: the game ended and
        its engine archived it and dropped the log before this feed had read the end (a
        game's last entries and the archiving can fall between two of the tail's reads). The
        rest comes from the archive, released as it is first seen (the archive keeps no
        append times: never early). No archive yet: the tail waits and asks again."""
        rest = await self.archived(self.game, len(self.records)) if self.archived else []
        if rest:
            self.add(rest, self.clock.now_ms())
        else:
            await asyncio.sleep(TAIL_BLOCK_MS / 1000)

    async def stop(self) -> None:
        """Cancel the tail task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


Loader = Callable[[str], Awaitable[GameFeed | None]]
