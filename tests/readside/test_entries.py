"""The per-entry policy and the one envelope (services/readside/entries.py): a table of what each
viewer receives of each entry kind, and every envelope of every ruleset's games decoded with the
typed schema (schema.py) the documents are generated from."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from services.eventlog.entry import ANSWER, EVENT, GENESIS, seal
from services.eventlog.records import (
    Abandon,
    AnswerRecord,
    SeatControl,
    decode_payload,
    encode_payload,
)
from services.readside import schema
from services.readside.entries import envelope, stored_envelope, terminal
from services.readside.positions import Positions
from services.rules import api

from .logs import TABLES, record


def _viewers(players: int) -> list[int]:
    return [api.SPECTATOR, api.GOD, *range(players)]


@pytest.mark.parametrize(("ruleset", "players", "options"), TABLES, ids=lambda x: str(x))
def test_every_envelope_decodes_to_its_schema_and_events_are_redacted(
    ruleset: str, players: int, options: dict[str, Any]
) -> None:
    entries, _ = record(ruleset, players, 3, options, limit=150)
    positions = Positions()
    positions.add_entries(enumerate(entries, 1))
    kinds: set[str] = set()
    for viewer in _viewers(players):
        got = [
            (seq, e)
            for seq, entry in enumerate(entries, 1)
            if (e := envelope(positions.position(viewer, seq), entry, viewer, lambda n: n + 7))
            is not None
        ]
        assert [json.loads(e)["seq"] for _, e in got] == list(range(1, len(got) + 1))
        for seq, data in got:
            env = schema.decode(data)
            entry = entries[seq - 1]
            kinds.add(type(env).__name__)
            if isinstance(env, schema.EventEntry):
                want = api.redact(api.decode_event(entry.payload), viewer)
                assert env.event == want  # the rules' one redaction, nothing else
                assert msgspec.json.encode(want) in data
    assert {"HeaderEntry", "EventEntry", "AnswerEntry"} <= kinds


def test_answers_go_only_to_their_seat_and_the_god_view() -> None:
    entries, _ = record("standard", 5, 4, limit=80)
    answers = [(e, decode_payload(e.payload, AnswerRecord)) for e in entries if e.kind == ANSWER]
    assert len({a.seat for _, a in answers}) > 2
    for entry, a in answers:
        assert envelope(1, entry, api.SPECTATOR) is None
        for seat in range(5):
            got = envelope(9, entry, seat, lambda n: 10_000 + n)
            if seat != a.seat:
                assert got is None  # withheld, not emptied
            else:
                body = json.loads(got or b"")["answer"]
                assert body == {
                    "decision": 10_000 + a.decision,  # the opaque id it was shown
                    "seat": a.seat,
                    "picks": a.picks,
                    "auto": False,
                }
        no_key = json.loads(envelope(9, entry, a.seat) or b"")["answer"]
        assert "decision" not in no_key  # never the engine's own number
        god = json.loads(envelope(9, entry, api.GOD) or b"")["answer"]
        assert god["decision"] == a.decision  # the god view: the log as it is


def test_control_abandon_other_kinds_and_the_end() -> None:
    control = SeatControl(seat=1, hosted=True, reason="asked")
    entries, g = record(
        "chengtian",
        2,
        5,
        controls={3: control},
        extra={
            4: ("judged", b"\x81\xa1x\x01"),  # a kind this code does not know
            6: ("abandon", encode_payload(Abandon("stalled", "nobody moved it"))),
        },
    )
    assert g.over
    by_kind = {e.kind: e for e in entries}
    for viewer in _viewers(2):
        c = schema.decode(envelope(4, by_kind["control"], viewer) or b"")
        assert isinstance(c, schema.ControlEntry) and c.control.hosted and c.control.seat == 1
        other = schema.decode(envelope(5, by_kind["judged"], viewer) or b"")
        assert isinstance(other, schema.OtherEntry) and other.type == "judged"
        ended = schema.decode(envelope(5, by_kind["abandon"], viewer) or b"")
        assert isinstance(ended, schema.AbandonEntry) and ended.abandon.reason == "stalled"
        reveal = schema.decode(envelope(6, by_kind["seed_reveal"], viewer) or b"")
        assert isinstance(reveal, schema.RevealEntry) and reveal.reveal.seed == 5
    ends = [terminal(e) for e in entries]
    assert ends[-1] == (True, True)  # the seed reveal closes the log
    assert sum(over for over, _ in ends[:-1]) == 1  # game_ended, once
    header = schema.decode(stored_envelope(1, msgspec.msgpack.encode(entries[0]), api.SPECTATOR))
    assert isinstance(header, schema.HeaderEntry) and len(header.header.seed_commitment) == 64


def test_a_guarded_event_reaches_an_outsider_blanked() -> None:
    """A draw shown to one seat: the drawer gets the faces, everyone else the count alone."""
    entries, _ = record("standard", 5, 6, limit=20)
    drawn = [
        e
        for e in entries
        if e.kind == EVENT
        and isinstance(ev := api.decode_event(e.payload), api.events.CardsMoved)
        and ev.seen_by
        and ev.cards
    ]
    assert drawn
    for entry in drawn:
        e = api.decode_event(entry.payload)
        seen_by = set(getattr(e, "seen_by", []))
        for viewer in _viewers(5):
            got = schema.decode(envelope(1, entry, viewer) or b"")
            assert isinstance(got, schema.EventEntry)
            cards = getattr(got.event, "cards")  # noqa: B009
            assert bool(cards) == (viewer in seen_by or viewer == api.GOD)


def test_a_new_entry_kind_is_carried_and_hashes_are_never_in_an_envelope() -> None:
    (entry,) = seal(GENESIS, 1, [("judged", b"whatever")])
    got = envelope(1, entry, api.GOD)
    assert got == b'{"seq":1,"kind":"other","type":"judged"}'
    entries, _ = record("standard", 5, 1, limit=30)
    for e in entries:
        for viewer in (api.GOD, 0):
            data = envelope(1, e, viewer) or b""
            assert e.hash.hex().encode() not in data and e.hash not in data


def test_unknown_envelopes_are_refused_by_the_schema() -> None:
    with pytest.raises(msgspec.ValidationError):
        schema.decode(b'{"seq":1,"kind":"secret","x":1}')
