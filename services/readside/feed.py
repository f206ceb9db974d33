"""A game's entries as this process has seen them: one reader per game, any number of watchers.

A `GameFeed` holds the stored entries of one game, the time each was appended, and a task tailing
the log (tail.py) while the game is live. Every watcher of the game (an SSE spectator, a gRPC
stream, a person's seat) waits on the feed instead of reading Redis itself, so a thousand
spectators cost one XREAD, and each entry is redacted and encoded once per viewer (entries.py).

Release times (``at_ms``) are the append times the store keeps beside each entry (Redis: the
server's TIME in the append script). An entry without one (written before stores kept times, or
read from an archive) falls back to the moment this process first read it: never earlier than
the append, so never early. The list is kept non-decreasing (a time earlier than the one before
it, from a server clock that stepped back, is raised to it), which only ever holds entries
longer.

With a decision source (decisions.py), the feed also asks for the public pending decision after
each new batch, one request at a time, and wakes the watchers when it changes. Where the store
read the engine's mark beside the feed's last entry (a people's game: decisions.py `Mark`,
the store's `mark_of`), the mark says it instead, as the engine would say it to a spectator
(`public_of`: only who is asked and the kind, and only of a kind a spectator may see), and the
engine is not asked: a watched people's game asked GetDecision after every move.

A `Cursor` is how far one stream of a feed has got; `take` gives what it may send now. The feed
works in log seqs; what goes out carries each viewer's positions (positions.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from pathlib import Path

import msgspec

from ..eventlog.entry import ANSWER, EVENT, decode_entry
from ..eventlog.records import AnswerRecord, decode_payload
from ..eventlog.store import EventStore, TimedRecord
from ..redisinfra.reconnect import Backoff, is_outage
from ..rules import api
from .access import Grant, released
from .clock import Clock
from .decisions import (
    DecisionSource,
    Mark,
    Pending,
    cleared_json,
    may_see,
    public_json,
    read_mark,
)
from .entries import OpaqueId, stored_envelope, terminal
from .fold import SeatFold
from .positions import Positions, answer_seat
from .tail import Tails, read_on

log = logging.getLogger(__name__)
# well under redis-py's default socket timeout (5 s since redis-py 8): an XREAD blocking as long
# as the read timeout races it, and each lost race cost a logged error and a second's pause
TAIL_BLOCK_MS = 2_000


MarkOf = Callable[[str], "tuple[int, bytes] | None"]
"""A store's `mark_of`: the newest mark it read of a game (the seq it stands beside, its bytes)."""


def public_of(mark: Mark, version: int) -> Pending | None:
    """What a spectator is told of the decision ``mark`` says is pending, at its position
    ``version``: who is asked and the kind if a spectator may learn of it (`may_see`, with the
    seat whose turn it is as the engine wrote it), else nothing, exactly as the engine's
    GetDecision without a seat token would say (decisions.py)."""
    if not may_see(mark.kind, mark.seat, mark.active, api.SPECTATOR):
        return None
    return Pending(version, mark.seat, mark.kind)


class GameFeed:
    """Entries of one game, their release times, the pending decision, change notification."""

    def __init__(
        self,
        game: str,
        clock: Clock,
        decisions: DecisionSource | None = None,
        opaque: OpaqueId | None = None,
        archive_dir: Path | None = None,
    ) -> None:
        self.game = game
        self.clock = clock
        self.decisions = decisions
        self.opaque = opaque  # a seat's answers name their decisions by these ids (entries.py)
        self.archive_dir = archive_dir  # where the game's archive file goes once it is over
        self.records: list[bytes] = []
        self.at_ms: list[int] = []  # append time (else first seen), non-decreasing
        self.positions = Positions()  # each viewer's position of each entry
        self.pending: Pending | None = None  # as the decision source last said
        self._public: tuple[Pending, bool] | None = None  # the last pending, and if public
        self._dirty = asyncio.Event()
        # the streams that show the public pending decision (Cursor's `show`): it is asked of
        # the source only while one does (a person's seat asks for its own: seats.py)
        self._showing: weakref.WeakSet[Cursor] = weakref.WeakSet()
        self._wanted = asyncio.Event()
        self.over = False  # game_ended or the seed reveal is in: nothing is secret any more
        self.closed = False  # the seed reveal is in: no entry will follow
        self.watchers = 0
        self.asked = 0  # public decisions asked of the decision source (the engine)
        self.marked = 0  # the rest: told by the engine's mark beside the last entry
        self.last_used = clock.now_ms()
        self._changed = asyncio.Event()
        self._cache: dict[int, list[bytes | None]] = {}
        self._folds: dict[int, SeatFold] = {}
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
            entry = decode_entry(data)
            self.records.append(data)
            self.at_ms.append(max(at, self.at_ms[-1]) if self.at_ms else at)
            self.positions.add(seq, answer_seat(entry))
            over, closed = terminal(entry)
            self.over, self.closed = self.over or over, self.closed or closed
        self._dirty.set()
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def released(self, delay_ms: int, now_ms: int) -> int:
        """The last sequence number a watcher ``delay_ms`` behind may have at ``now_ms``."""
        return released(self.at_ms, delay_ms, now_ms)

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
                try:
                    event = api.decode_event(entry.payload)
                except (msgspec.MsgspecError, ValueError, TypeError):
                    continue  # unreadable (entries.py says so once): not a turn's start
                if type(event).__struct_config__.tag == "turn_started":
                    return int(getattr(event, "seat"))  # noqa: B009
        return -1

    def decision_for(self, version: int, viewer: int = api.SPECTATOR) -> bytes | None:
        """The public part of the decision pending right after entry ``version`` (None: nothing
        pending, not known yet, or not public: decisions.py), its version in ``viewer``'s
        positions. The source's decision is a spectator's (its version a spectator position),
        so it belongs to every entry up to the next one a spectator receives."""
        p = self.pending
        if p is None or version > len(self.records) or self.over:
            return None
        if p.version != self.positions.position(api.SPECTATOR, version):
            return None
        if self._public is None or self._public[0] != p:
            active = self.active_seat(version)
            self._public = (p, may_see(p.kind, p.seat, active, api.SPECTATOR))
        if not self._public[1]:
            return None
        return public_json(p, self.positions.position(viewer, version))

    def answered_last(self, seat: int, decision: int, version: int) -> bool:
        """Whether entry ``version`` ends the batch of ``seat``'s answer to the decision whose
        opaque id is ``decision``: the entries after that answer up to ``version`` are all its
        events. (What SubmitAction returned as pending after that answer is pending at exactly
        that entry: any later entry is another answer, a control entry or the end.)"""
        if self.opaque is None or not 0 < version <= len(self.records):
            return False
        for data in reversed(self.records[:version]):
            entry = decode_entry(data)
            if entry.kind == EVENT:
                continue
            if entry.kind != ANSWER or answer_seat(entry) != seat:
                return False
            rec = decode_payload(entry.payload, AnswerRecord)
            return self.opaque(rec.decision) == decision
        return False

    def seat_fold(self, seat: int) -> SeatFold:
        """``seat``'s view folded over every entry held (kept, and folded on from where it was)."""
        fold = self._folds.get(seat)
        if fold is None:
            fold = self._folds[seat] = SeatFold(seat, f"{self.game} seat {seat}")
        for seq in range(fold.at + 1, len(self.records) + 1):
            fold.entry(seq, decode_entry(self.records[seq - 1]))
        return fold

    def show_to(self, cursor: Cursor) -> None:
        """``cursor`` shows the public pending decision: ask for it (now, and after each batch
        while any such cursor lives)."""
        self._showing.add(cursor)
        self._dirty.set()
        self._wanted.set()

    async def _ask_decisions(self, source: DecisionSource, mark_of: MarkOf | None = None) -> None:
        """Ask for the pending decision whenever entries arrive (one request at a time;
        entries arriving during a request cause one more), while a stream shows it: a feed
        only people's seats read asked the engine after every batch for nothing, ~2 calls a
        decision of their games. The engine's mark beside the last entry held, if the store
        read one (``mark_of``), says it without a request (module docstring)."""
        backoff = 0.5
        while not self.closed:
            await self._dirty.wait()
            if not self._showing:  # nobody shows it: forget it, ask once someone does
                self.pending, self._public = None, None
                self._wanted.clear()
                await self._wanted.wait()
                continue
            self._dirty.clear()
            if self.over:
                continue
            marked = self._marked(mark_of)
            if marked is not None:
                self.marked += 1
                if marked[0] != self.pending:
                    self.pending = marked[0]
                    self._wake()
                continue
            try:
                self.asked += 1
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

    def _marked(self, mark_of: MarkOf | None) -> tuple[Pending | None] | None:
        """What a spectator is told is pending after the last entry held, from the engine's
        mark beside exactly that entry: (the public decision, or None when nothing a spectator
        may see is pending), or None without such a mark (the engine is asked)."""
        held = mark_of(self.game) if mark_of is not None else None
        if held is None or held[0] != len(self.records):
            return None
        mark = read_mark(held[1])
        if mark is None:
            return None
        return (public_of(mark, self.positions.position(api.SPECTATOR, held[0])),)

    def envelope(self, seq: int, viewer: int) -> bytes | None:
        """Entry ``seq`` as ``viewer`` receives it, numbered by its position (cached per
        viewer)."""
        cache = self._cache.setdefault(viewer, [])
        while len(cache) < seq:
            n = len(cache) + 1
            at = self.positions.position(viewer, n)
            cache.append(stored_envelope(at, self.records[n - 1], viewer, self.opaque))
        return cache[seq - 1]

    def batch(self, viewer: int, after: int, end: int) -> list[tuple[int, bytes]]:
        """(position, envelope) of the entries ``after < seq <= end`` ``viewer`` receives."""
        at = self.positions
        return [
            (at.position(viewer, s), e)
            for s in range(after + 1, end + 1)
            if (e := self.envelope(s, viewer)) is not None
        ]

    async def wait_beyond(self, after: int, any_change: bool = False) -> None:
        """Return once an entry after ``after`` is held, or the log is complete (or, with
        ``any_change``, once anything changed: a new pending decision, say)."""
        while len(self.records) <= after and not self.closed:
            await self._changed.wait()
            if any_change:
                return

    def tail(
        self,
        store: EventStore,
        idle_ms: int,
        on_stop: Callable[[], None],
        tails: Tails | None = None,
    ) -> None:
        """Keep reading new entries in the background until the game closes or sits unwatched
        (with ``tails``: waiting together with the process's other feeds, tail.py)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._tail(store, idle_ms, on_stop, tails))

    async def _tail(
        self,
        store: EventStore,
        idle_ms: int,
        on_stop: Callable[[], None],
        tails: Tails | None,
    ) -> None:
        asking = None
        if self.decisions is not None:
            self._dirty.set()
            asking = asyncio.create_task(
                self._ask_decisions(self.decisions, getattr(store, "mark_of", None))
            )
        backoff = Backoff(0.2, 2.0)
        try:
            while not self.closed:
                if not self.watchers and self.clock.now_ms() - self.last_used > idle_ms:
                    break
                try:
                    got, gone = await read_on(
                        store, self.game, len(self.records), TAIL_BLOCK_MS, self.archive_dir, tails
                    )
                except Exception as exc:  # Redis restarting: keep the watchers, retry shortly
                    if not is_outage(exc):
                        log.exception("tailing game %s", self.game)
                    await backoff.sleep()  # (quietly: every feed would say so)
                    continue
                backoff.reset()
                if got:
                    self.add(got, self.clock.now_ms())
                elif gone:  # archived, its file not written yet: ask again shortly
                    await asyncio.sleep(TAIL_BLOCK_MS / 1000)
        finally:
            if asking is not None:
                asking.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asking
            on_stop()

    async def stop(self) -> None:
        """Cancel the tail task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


Update = tuple[list[tuple[int, bytes]], bytes | None]
"""What a watcher receives at once: entries (its position, envelope JSON), then the public
pending decision JSON if one is (newly) known for the last entry it has (decisions.py)."""


class Cursor:
    """How far one stream of a feed has got: the entries sent (up to log seq ``after``) and the
    public decision last sent (``sent``). One cursor may serve one viewer or every viewer of the
    same grant at once (an SSE fan-out): what it yields depends on the grant alone, never on who
    receives it."""

    def __init__(self, feed: GameFeed, grant: Grant, after: int, show: bool) -> None:
        self.feed = feed
        self.grant = grant
        self.after = after
        self.show = show and grant.live and feed.decisions is not None
        self.sent: bytes | None = None
        if self.show:
            feed.show_to(self)

    def take(self, now_ms: int) -> Update | None:
        """What to send now: the entries released since ``after`` (redacted for the grant's
        viewer) and the public pending decision if it changed; None if nothing."""
        feed, after, viewer = self.feed, self.after, self.grant.viewer
        end = feed.released(self.grant.delay_ms, now_ms)
        batch: list[tuple[int, bytes]] = []
        if end > after:
            batch = feed.batch(viewer, after, end)
            self.after = after = end
        if batch:
            self.sent = None  # a viewer drops the decision it shows when entries arrive
        decision = feed.decision_for(after, viewer) if self.show else None
        clear = cleared_json(feed.positions.position(viewer, after))
        if decision is None and self.sent is not None and self.sent != clear:
            # what the viewer shows was answered by an answer alone (withheld from it): tell
            # it, so it does not keep showing a stale decision
            decision = clear
        if decision == self.sent:
            decision = None
        elif decision is not None:
            self.sent = decision
        return (batch, decision) if batch or decision is not None else None

    @property
    def finished(self) -> bool:
        """The log is complete and every entry of it was taken."""
        return self.feed.closed and self.after >= self.feed.version
