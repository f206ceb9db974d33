"""Log entries and decisions as a viewer may see them (protobuf messages)."""

from __future__ import annotations

import msgspec

from ..eventlog.entry import ANSWER, CONTROL, EVENT, HEADER, SEED_REVEAL, Entry
from ..eventlog.records import AnswerRecord, Header, SeatControl, SeedReveal, decode_payload
from ..proto_gen.arena.v1 import common_pb2
from ..rules import api
from ..rules.core.views import decision_visible


def envelope(seq: int, entry: Entry, viewer: int) -> common_pb2.EventEnvelope:
    """One entry for `viewer` (seat, api.SPECTATOR or api.GOD): events redacted, and answers'
    picks shown only to the seat that gave them (they can name hidden cards)."""
    payload: bytes
    if entry.kind == EVENT:
        event = api.redact(api.decode_event(entry.payload), viewer)
        payload = msgspec.json.encode(event)
        kind = getattr(event, "__struct_config__").tag  # noqa: B009
    elif entry.kind == ANSWER:
        rec = decode_payload(entry.payload, AnswerRecord)
        shown = viewer in (rec.seat, api.GOD)
        payload = msgspec.json.encode(
            {
                "decision": rec.decision,
                "seat": rec.seat,
                "picks": rec.picks if shown else None,
                "count": len(rec.picks),
                "auto": rec.auto,
            }
        )
        kind = ANSWER
    elif entry.kind == HEADER:
        payload, kind = msgspec.json.encode(decode_payload(entry.payload, Header)), HEADER
    elif entry.kind == SEED_REVEAL:
        payload = msgspec.json.encode(decode_payload(entry.payload, SeedReveal))
        kind = SEED_REVEAL
    elif entry.kind == CONTROL:  # public: who plays a seat is seen at the table
        payload, kind = msgspec.json.encode(decode_payload(entry.payload, SeatControl)), CONTROL
    else:
        payload, kind = b"null", entry.kind
    return common_pb2.EventEnvelope(
        seq=seq, type=str(kind), hash=entry.hash, payload_json=payload.decode()
    )


def may_see(game: api.Game, d: api.Decision, viewer: int) -> bool:
    """Whether ``viewer`` may learn that ``d`` is pending at all: being asked can give a hand
    away (a 无懈可击 prompt), so other viewers see only the public kinds (rules' views)."""
    return decision_visible(d.kind, d.seat, game.current, viewer)


def decision(game_id: str, d: api.Decision, version: int, viewer: int) -> common_pb2.Decision:
    """A decision for `viewer`: options and info only for the seat that decides."""
    mine = viewer == d.seat
    return common_pb2.Decision(
        game_id=game_id,
        id=d.id,
        seat=d.seat,
        kind=d.kind,
        options=list(d.options) if mine else [],
        min=d.min,
        max=d.max,
        declinable=d.declinable,
        info_json=msgspec.json.encode(d.info).decode() if mine else "",
        version=version,
    )
