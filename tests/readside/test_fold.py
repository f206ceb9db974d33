"""The fold of a seat's view (services/readside/fold.py): from envelopes, from stored entries and
from events it builds the rules' own view (api.fold), accepts every entry kind a log holds, and
steps over what it cannot read once, counted and logged once."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest

from services.eventlog.entry import EVENT
from services.eventlog.records import SeatControl
from services.readside.entries import envelope
from services.readside.fold import SeatFold
from services.readside.positions import Positions
from services.rules import api

from .logs import TABLES, record


@pytest.mark.parametrize(("ruleset", "players", "options"), TABLES, ids=lambda x: str(x))
def test_three_ways_in_fold_the_rules_view(
    ruleset: str, players: int, options: dict[str, Any]
) -> None:
    entries, g = record(
        ruleset,
        players,
        2,
        options,
        controls={4: SeatControl(0, True, "timeouts"), 9: SeatControl(0, False, "taken_back")},
    )
    events = [api.decode_event(e.payload) for e in entries if e.kind == EVENT]
    positions = Positions()
    positions.add_entries(enumerate(entries, 1))
    for viewer in [api.SPECTATOR, *range(players)]:
        want = api.fold(events, viewer)
        from_json, from_log, from_events = SeatFold(viewer), SeatFold(viewer), SeatFold(viewer)
        for seq, entry in enumerate(entries, 1):
            from_log.entry(seq, entry)
            position = positions.position(viewer, seq)
            data = envelope(position, entry, viewer)
            if data is not None:
                from_json.envelope(position, data)
            if entry.kind == EVENT:
                from_events.event(seq, api.redact(api.decode_event(entry.payload), viewer))
        for fold in (from_json, from_log, from_events):
            assert msgspec.to_builtins(fold.view) == msgspec.to_builtins(want)
            assert fold.unreadable == 0
        for fold in (from_json, from_log):
            assert fold.hosted == set() and fold.over == g.over and fold.closed == g.over


def test_control_entries_say_who_plays_a_seat_and_repeats_change_nothing() -> None:
    entries, _ = record("standard", 5, 3, limit=12, controls={5: SeatControl(2, True, "asked")})
    fold = SeatFold(2)
    for seq, entry in enumerate(entries, 1):
        fold.entry(seq, entry)
    assert fold.hosted == {2} and fold.at == len(entries)
    before = msgspec.to_builtins(fold.view)
    for seq, entry in enumerate(entries, 1):  # a stream resumed from the start
        assert fold.entry(seq, entry) is None
    assert msgspec.to_builtins(fold.view) == before


def test_an_unreadable_entry_is_stepped_over_counted_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fold = SeatFold(0, "g seat 0")
    with caplog.at_level(logging.ERROR):
        assert fold.envelope(1, b'{"seq":1,"kind":"event","event":{"type":"no_such"}}') is None
        assert fold.envelope(2, b"not json") is None
        assert fold.envelope(3, b'{"seq":3,"kind":"other","type":"abandoned"}') is None
        assert fold.envelope(4, b'{"seq":4,"kind":"answer","answer":{"seat":0,"picks":[]}}') is None
        e = fold.envelope(
            5, b'{"seq":5,"kind":"event","event":{"type":"turn_started","seat":1,"round":1}}'
        )
    assert isinstance(e, api.events.TurnStarted) and fold.view.current == 1
    assert fold.at == 5 and fold.unreadable == 2  # the unknown kind is read, not unreadable
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert len(caplog.records) == 1 and "g seat 0: entry 1" in caplog.records[0].message
