"""Every reader accepts every entry a log can hold (#39 item 1): an event this build cannot
decode and an answer whose payload is damaged, in a live log, reach every channel of the read
side as kind `other` (the answer only to the god view: whose it is cannot be told), numbered
without a gap; no stream stops on them, the seat's fold steps over them, and the read side
logs each kind once and counts every one (the replay server's arena_replay_entries_unreadable).
"""

from __future__ import annotations

import json
import logging

import msgspec
import pytest

from services.eventlog import InMemoryEventStore
from services.eventlog.entry import ANSWER, EVENT, GENESIS, Entry, encode_entry, seal
from services.readside import entries as entry_policy
from services.readside.clock import SystemClock
from services.readside.fold import SeatFold
from services.readside.positions import positions_of
from services.readside.reader import ReadSide
from services.readside.watch import Watch
from services.rules import api

from .logs import record


def _damaged() -> list[Entry]:
    """A finished game's log with an event from a newer build and a damaged answer inside."""
    log, g = record("standard", 5, 2)
    assert g.over
    items = [(e.kind, e.payload) for e in log]
    future = msgspec.msgpack.encode({"type": "omen_seen", "seat": 1, "card": 7})
    items[40:40] = [(EVENT, future), (ANSWER, b"\xc1 not msgpack")]
    return seal(GENESIS, 1, items)


async def test_unreadable_entries_go_out_as_other_and_nothing_stops(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = _damaged()
    store = InMemoryEventStore()
    await store.append("d1", 0, [encode_entry(e) for e in log])
    before = dict(entry_policy.unreadable)
    reads = ReadSide(store, seat_check=lambda g, s, t: t == f"seat-{s}")
    at = positions_of(enumerate((encode_entry(e) for e in log), 1))
    with caplog.at_level(logging.ERROR):
        for viewer in (api.SPECTATOR, api.GOD, 0, 1, 4):
            page = await reads.get_events("d1", viewer, f"seat-{viewer}")
            got = [json.loads(e) for e in page.entries]
            assert [x["seq"] for x in got] == list(range(1, len(got) + 1))  # no gap
            assert page.upto == len(got) == at.position(viewer, len(log)) and page.over
            others = [x["type"] for x in got if x["kind"] == "other"]
            assert others == (["event", "answer"] if viewer == api.GOD else ["event"])
            fold = SeatFold(viewer)
            for x, data in zip(got, page.entries, strict=True):
                fold.envelope(x["seq"], data)
            assert fold.closed and fold.unreadable == 0  # read, and stepped over
            streamed = [e async for batch in await reads.stream("d1", viewer) for _, e in batch]
            assert streamed == page.entries
        seen = await Watch(store, SystemClock()).page("d1", 0, len(log), True, at, None)
        assert [e for _, e in seen.entries] == (await reads.get_events("d1", 0, "seat-0")).entries
    await reads.close()
    counted = {k: n - before.get(k, 0) for k, n in entry_policy.unreadable.items()}
    assert counted[EVENT] > 0 and counted[ANSWER] > 0
    said = [r.message for r in caplog.records if "could not be read" in r.message]
    assert len(said) <= 2  # once per kind in this process (perhaps said before this test)
