"""The seat feed: the `view` a bot seat's decisions message carries (services/engine/feed.py).

Checked against the log itself: every view holds exactly the seat's redacted events between its
bounds (the same `api.redact` every other channel uses), consecutive views of a seat tile the
log with no gap, a mind folded only from views ends equal to one folded from the log, and a view
that does not connect to a mind is refused without touching it. Views number events by the
seat's positions (eventlog/positions.py), never by log seq.
"""

from __future__ import annotations

import msgspec
import pytest

from services.bots.answer import fold_view, parse
from services.bots.seats import Minds
from services.engine.service import NewMatch
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.eventlog.entry import EVENT, decode_entry
from services.readside.botfeed import MAX_BUFFERED, SeatFeed, SeatView
from services.readside.positions import Positions, positions_of
from services.rules import api
from services.rules.api import fold_view as apply
from services.rules.api import new_view
from tests.engine.test_service import _games, play_out


async def _played(
    seed: int, players: int = 5, ruleset: str = "standard"
) -> tuple[Positions, MemorySide, dict[int, api.Event]]:
    """A game played out: its positions, its bot messages and its events by log seq."""
    store, side = InMemoryEventStore(), MemorySide()
    g = _games(store, side)
    await g.create_game(
        NewMatch(
            match_id="f1",
            ruleset=ruleset,
            seed=seed,
            seats=[Seat("bot:heuristic", True) for _ in range(players)],
        )
    )
    await play_out(g, "f1")
    log = {}
    for seq, data in await store.read("f1"):
        entry = decode_entry(data)
        if entry.kind == EVENT:
            log[seq] = api.decode_event(entry.payload)
    return positions_of(await store.read("f1")), side, log


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_views_are_the_seats_redacted_log_without_gaps(seed: int) -> None:
    at, side, log = await _played(seed)
    reached: dict[int, int] = {}
    messages = side.decisions()
    assert messages
    for f in messages:
        seat, version = f.seat, f.version
        assert f.view is not None
        view = msgspec.msgpack.decode(f.view, type=SeatView)
        assert view.upto == version
        assert view.after == reached.get(seat, 0)  # picks up exactly where the last one ended
        mine = {at.position(seat, s): e for s, e in log.items()}  # by the seat's positions
        want = [(p, api.redact(e, seat)) for p, e in mine.items() if view.after < p <= view.upto]
        got = [(s, api.decode_event(bytes(raw))) for s, raw in view.events]
        assert got == want
        reached[seat] = view.upto


async def test_hidden_cards_never_reach_other_seats() -> None:
    """Byte-level: a card face guarded by seen_by appears only in views of seats that saw it."""
    at, side, log = await _played(4)
    guarded = [e for e in log.values() if getattr(e, "seen_by", None) is not None]
    assert guarded
    for f in side.decisions():
        seat = f.seat
        assert f.view is not None
        view = msgspec.msgpack.decode(f.view, type=SeatView)
        mine = {at.position(seat, s): e for s, e in log.items()}
        for p, raw in view.events:
            e = mine[p]
            seen_by = getattr(e, "seen_by", None)
            if seen_by is not None and seat not in seen_by:
                assert bytes(raw) != api.encode_event(e) or api.redact(e, seat) == e


async def test_a_mind_fed_by_views_equals_one_fed_by_the_log() -> None:
    at, side, log = await _played(5)
    minds = Minds("heuristic")
    for f in side.decisions():
        req = parse(f)
        mind = minds.get(req.game, req.decision.seat, req.player)
        assert req.view is not None
        assert fold_view(mind, req.view, req.version)
        assert mind.seq == req.version
    for (_, seat), mind in minds.minds.items():
        reference = new_view(seat)
        for s, e in log.items():
            if at.position(seat, s) <= mind.seq:
                apply(reference, api.redact(e, seat))
        assert msgspec.msgpack.encode(mind.view) == msgspec.msgpack.encode(reference)


async def test_a_view_that_does_not_connect_is_refused() -> None:
    _, side, _ = await _played(6)
    msgs = [f for f in side.decisions() if f.seat == 0]
    late = parse(msgs[3])  # a mind at 0 has missed the views before this one
    mind = Minds("heuristic").get(late.game, 0, late.player)
    assert late.view is not None
    before = msgspec.msgpack.encode(mind.view)
    assert not fold_view(mind, late.view, late.version)
    assert mind.seq == 0 and msgspec.msgpack.encode(mind.view) == before
    assert not fold_view(mind, b"\xc1 not msgpack", late.version)
    assert mind.seq == 0


def test_feed_falls_back_after_a_reload_and_when_too_far_behind() -> None:
    at = Positions()
    for seq in range(1, MAX_BUFFERED + 6):
        at.add(seq, None)
    feed = SeatFeed()  # as after a reload: it knows nothing a seat was sent
    assert feed.view_for(0, 10, at) is None  # unknown: the bot catches up through the engine
    assert feed.view_for(0, 12, at) is not None  # known from now on (empty: nothing buffered)
    fresh = SeatFeed.from_start([0, 1])
    fresh.start = MAX_BUFFERED  # as if the oldest events had been dropped
    assert fresh.view_for(0, MAX_BUFFERED + 5, at) is None
