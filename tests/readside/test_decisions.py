"""The pending decision as each viewer may see it (services/readside/decisions.py)."""

from __future__ import annotations

import asyncio
import gc

from services.eventlog import InMemoryEventStore
from services.readside.access import Grant
from services.readside.clock import SystemClock
from services.readside.decisions import Pending, cleared_json, public_json, shown
from services.readside.feed import Cursor, GameFeed
from services.rules import api


def _decision(kind: str, seat: int) -> api.Decision:
    return api.Decision(
        id=7, seat=seat, kind=kind, options=["a", "b"], min=1, max=2, info={"card": 3}
    )


def test_the_deciding_seat_alone_gets_options_and_info() -> None:
    d = _decision("play", 1)
    mine = shown(d, 1, 1, id=99, version=12, deadline_ms=5)
    assert mine is not None and mine.mine and mine.options == ["a", "b"] and mine.info
    for viewer in (0, 2, api.SPECTATOR):
        other = shown(d, viewer, 1, id=99, version=12, deadline_ms=5)
        assert other is not None and not other.mine
        assert (other.options, other.min, other.max, other.info) == ([], 0, 0, {})
        assert other.public == Pending(12, 1, "play")


def test_being_asked_is_withheld_where_it_tells_a_hand() -> None:
    for kind, active in (("respond", 1), ("confirm", 1), ("play", 0), ("cards", 1)):
        d = _decision(kind, 1)
        assert shown(d, 1, active, id=1, version=1) is not None  # the seat itself
        assert shown(d, api.GOD, active, id=1, version=1) is not None
        for viewer in (0, 2, api.SPECTATOR):
            assert shown(d, viewer, active, id=1, version=1) is None
    assert shown(_decision("draft", 3), api.SPECTATOR, 0, id=1, version=1) is not None


def test_the_public_messages() -> None:
    assert public_json(Pending(4, 2, "discard"), 9) == b'{"version":9,"seat":2,"kind":"discard"}'
    assert cleared_json(9) == b'{"version":9}'


class _Counting:
    """A decision source that counts the questions (the engine's GetDecision)."""

    def __init__(self) -> None:
        self.asked = 0

    async def pending(self, game: str) -> Pending | None:
        self.asked += 1
        return Pending(1, 0, "play")

    async def close(self) -> None:
        pass


async def test_the_public_decision_is_asked_only_while_a_stream_shows_it() -> None:
    """A feed that only people's seats read (their own decisions come from their seat reader)
    asks the source nothing; a spectator's stream that shows the decision makes it ask at once
    and after each batch; once that stream is gone, it stops again."""
    store = InMemoryEventStore()
    source = _Counting()
    feed = GameFeed("g1", SystemClock(), source)
    feed.tail(store, 60_000, lambda: None)
    entry = b"\x94\x01\xa5event\xc4\x00\xc4\x00"  # (an event entry, empty)
    for n in range(3):
        await store.append("g1", n, [b"x"])
        feed.add([(n + 1, entry, None)], 0)
        await asyncio.sleep(0.01)
    assert source.asked == 0
    cur = Cursor(feed, Grant(api.SPECTATOR, 0), 0, show=True)
    await asyncio.sleep(0.01)
    assert source.asked == 1
    feed.add([(4, entry, None)], 0)
    await asyncio.sleep(0.01)
    assert source.asked == 2
    del cur
    gc.collect()
    feed.add([(5, entry, None)], 0)
    await asyncio.sleep(0.01)
    assert source.asked == 2 and feed.pending is None
    await feed.stop()


class _Marked(InMemoryEventStore):
    """A store that read the engine's mark beside entry ``at`` (as the Redis store does)."""

    def __init__(self) -> None:
        super().__init__()
        self.mark: tuple[int, bytes] | None = None

    def mark_of(self, game: str) -> tuple[int, bytes] | None:
        return self.mark


async def test_a_spectator_is_told_from_the_mark_beside_the_last_entry_not_the_engine() -> None:
    """The engine's mark beside the feed's last entry says what a spectator is shown (who and
    the kind, only of a public kind), and the source is not asked; a mark beside an earlier
    entry, or none, and the source is asked as before."""
    from services.readside.decisions import Mark, mark_bytes

    store = _Marked()
    source = _Counting()
    feed = GameFeed("g1", SystemClock(), source)
    feed.tail(store, 60_000, lambda: None)
    entry = b"\x94\x01\xa5event\xc4\x00\xc4\x00"  # (an event entry, empty)
    cur = Cursor(feed, Grant(api.SPECTATOR, 0), 0, show=True)

    async def entries(n: int, mark: Mark | None, at: int | None = None) -> None:
        first = feed.version
        for k in range(n):
            await store.append("g1", first + k, [b"x"])
        store.mark = None if mark is None else (at or first + n, mark_bytes(mark))
        feed.add([(first + k + 1, entry, None) for k in range(n)], 0)
        await asyncio.sleep(0.01)

    await entries(2, Mark(seat=2, kind="play", active=2, id=55))
    assert source.asked == 0 and feed.marked == 1
    assert feed.pending == Pending(2, 2, "play")
    # a 闪 asked of a seat whose turn it is not: a spectator learns nothing, nor the engine asked
    await entries(1, Mark(seat=3, kind="respond", active=2, id=56))
    assert source.asked == 0 and feed.pending is None
    await entries(2, Mark(seat=1, kind="discard", active=1, id=57), at=4)  # beside entry 4 of 5
    assert source.asked == 1 and feed.pending == Pending(1, 0, "play")  # (the source's)
    await entries(1, None)
    assert source.asked == 2 and feed.asked == 2 and feed.marked == 2
    del cur
    await feed.stop()
