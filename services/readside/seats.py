"""A seat's own view and stream: what a person (or any client holding a seat) receives.

The entries come from the game's shared feed (reader.py), redacted for the seat like every
viewer's; the view is the seat's fold of them (fold.py), kept per feed and folded on; the
pending decision is asked of the engine with the seat's token (`SeatDecisions`), so the seat
gets its options and nobody else does. An answer's reply from the engine (SubmitAction) already
says what is pending after it: `answered` keeps that, and the stream and the view use it instead
of asking the engine again, when the feed holds exactly that answer's entries and nothing after.
And after another seat's move the engine's mark beside the append's last entry says what is
pending (decisions.py `Mark`, read live by the store: `mark_of`): another seat's decision is
shown from it as the engine would show it, and only the seat's own is asked of the engine.

Every number here is the seat's own position (positions.py) and decision ids are the engine's
opaque ones: nothing a seat receives counts what went to the other seats.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from ..errors import Refused
from ..rules import api
from .access import NotFound
from .decisions import Asked, SeatDecisions, Shown, asked_from, read_mark
from .feed import GameFeed
from .reader import ReadSide

log = logging.getLogger(__name__)
GAME_START_WAIT_S = 10  # a game just matched may take a moment to be started by an engine
MAX_HINTS = 4096


@dataclass(frozen=True)
class SeatPicture:
    """The seat's view now: folded from every entry it received (``version``: its position),
    whether its bot plays it (托管), and what is pending as it may know it (``mine``: its own
    decision, with options; ``waits``: another seat's public one)."""

    version: int
    over: bool
    hosted: bool
    view: api.View
    mine: Shown | None = None
    waits: Shown | None = None


@dataclass(frozen=True)
class SeatMessage:
    """The seat's pending decision changed: as of its position ``version``, its own decision
    (``mine``), another seat's public one (``waits``), or neither."""

    version: int
    mine: Shown | None
    waits: Shown | None


SeatUpdate = tuple[list[tuple[int, bytes]], SeatMessage | None]
"""What a seat's stream sends at once: entries (position, envelope), then a decision message."""


def _split(seat: int, asked: Asked) -> tuple[Shown | None, Shown | None]:
    d = asked.decision
    if asked.over or d is None:
        return None, None
    return (d, None) if d.seat == seat else (None, d)


class SeatReader:
    """Seats' views and streams over a `ReadSide`, decisions from `decisions`."""

    def __init__(self, reads: ReadSide, decisions: SeatDecisions) -> None:
        self.reads = reads
        self.decisions = decisions
        # (game, seat) -> (the answer's opaque decision id, what SubmitAction said is pending)
        self._hints: OrderedDict[tuple[str, int], tuple[int, Asked]] = OrderedDict()
        self.asked = 0  # decisions asked of the engine (the rest came with an answer or a mark)
        self.marked = 0  # told by the engine's mark beside the log's entries
        self.hinted = 0  # told by the engine's reply to the seat's own answer

    async def feed(self, game: str, seat: int, token: str) -> GameFeed:
        """The game's feed, as the seat may see it (Forbidden without the seat's token); a game
        just matched may not be started yet, so a missing one is waited for a little."""
        for _ in range(GAME_START_WAIT_S * 10):
            try:
                feed, _ = await self.reads.grant(game, seat, token)
                return feed
            except NotFound:
                await asyncio.sleep(0.1)
        raise Refused("NOT_FOUND", f"game {game} has not started")

    def answered(self, game: str, seat: int, decision: int, after: Asked) -> None:
        """The seat answered the decision whose opaque id is ``decision`` and the engine said
        what is pending after it, as the seat may see it (SubmitAction's reply)."""
        self._hints[(game, seat)] = (decision, after)
        self._hints.move_to_end((game, seat))
        while len(self._hints) > MAX_HINTS:
            self._hints.popitem(last=False)

    async def _asked(self, feed: GameFeed, seat: int, token: str, after: int) -> Asked:
        """What is pending as the seat may see it, with the feed at log seq ``after``: the
        engine's reply to the seat's last answer if the feed holds exactly that answer's
        entries, else the engine asked now."""
        hint = self._hints.get((feed.game, seat))
        if hint is not None:
            decision, asked = hint
            position = feed.positions.position(seat, after)
            if asked.version == position and feed.answered_last(seat, decision, after):
                self.hinted += 1
                return asked
        marked = self._marked(feed, seat, after)
        if marked is not None:
            self.marked += 1
            return marked
        self.asked += 1
        return await self.decisions.pending(feed.game, token)

    def _marked(self, feed: GameFeed, seat: int, after: int) -> Asked | None:
        """What is pending for the seat as the engine's mark beside entry ``after`` says, if
        the store read one there (a people's game's append), and it is not the seat's own
        decision (those are asked of the engine, which alone sends the options)."""
        mark_of = getattr(self.reads.store, "mark_of", None)
        held = mark_of(feed.game) if mark_of is not None else None
        if held is None or held[0] != after:
            return None
        mark = read_mark(held[1])
        if mark is None:
            return None
        return asked_from(mark, seat, feed.positions.position(seat, after))

    async def view(self, game: str, seat: int, token: str) -> SeatPicture:
        """The seat's view now and what is pending for it."""
        feed = await self.feed(game, seat, token)
        after = feed.version
        asked = Asked(0, None, True) if feed.over else await self._asked(feed, seat, token, after)
        fold = feed.seat_fold(seat)
        position = feed.positions.position(seat, fold.at)
        mine, waits = _split(seat, asked)
        if asked.version != position:  # the log moved between the two reads: no stale decision
            mine = waits = None
        return SeatPicture(position, feed.over, seat in fold.hosted, fold.view, mine, waits)

    async def stream(
        self, game: str, seat: int, token: str, after: int
    ) -> AsyncGenerator[SeatUpdate, None]:
        """The seat's entries after its position ``after``, live, each batch followed by a
        `SeatMessage` when what is pending for the seat changed (a decision is sent once)."""
        feed = await self.feed(game, seat, token)
        return self._watch(feed, seat, token, feed.positions.seq(seat, max(0, after)))

    async def _watch(
        self, feed: GameFeed, seat: int, token: str, after: int
    ) -> AsyncGenerator[SeatUpdate, None]:
        # `after` is a log seq here, sent as the seat's position; `asked` the log seq the engine
        # was last asked at; `shown` (decision id, its deadline, waits version) last sent: a
        # repeat of the same is not sent again
        asked, shown = -1, (0, 0, 0)
        feed.watchers += 1
        try:
            while True:
                end = feed.version
                batch = feed.batch(seat, after, end)
                after = max(after, end)
                position = feed.positions.position(seat, after)
                message: SeatMessage | None = None
                if feed.over:
                    if shown != (0, 0, 0):  # the game ended: nothing is pending any more
                        shown = (0, 0, 0)
                        message = SeatMessage(position, None, None)
                elif asked != after:
                    if batch:  # the entries go out at once, not after the engine is asked
                        yield batch, None
                        batch = []
                    try:
                        now = await self._asked(feed, seat, token, after)
                    except Refused as exc:
                        if exc.code in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
                            raise
                        # NOT_FOUND is every game's end (the engine drops a finished game
                        # before this feed has read its last entries): not worth a warning
                        level = logging.DEBUG if exc.code == "NOT_FOUND" else logging.WARNING
                        log.log(level, "decision of %s for seat %d: %s", feed.game, seat, exc)
                        if batch:  # the entries still go out
                            yield batch, None
                        # the engine is away or behind, or has dropped the game that ended
                        # (its end is then in the log, or the archive: the feed reads it):
                        # ask again at the next entry, or soon
                        self.reads.keep_tailing(feed)
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(feed.wait_beyond(after), 1)
                        continue
                    asked = after
                    mine, waits = _split(seat, now)
                    key = (
                        mine.id if mine else 0,
                        mine.deadline_ms if mine else 0,  # 托管 on or off: a new clock
                        waits.version if waits else 0,
                    )
                    # the engine may be ahead of the feed: its entries are on their way, and
                    # it is asked again when they arrive
                    if now.version == position and key != shown:
                        shown = key
                        message = SeatMessage(position, mine, waits)
                if batch or message is not None:
                    yield batch, message
                elif feed.closed and after >= feed.version:
                    return
                else:
                    self.reads.keep_tailing(feed)
                    await feed.wait_beyond(after)
        finally:
            feed.watchers -= 1
            feed.last_used = self.reads.clock.now_ms()
