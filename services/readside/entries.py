"""The per-entry policy and the one envelope: which entries of a game's log a viewer receives,
and each one as the JSON every channel sends (SSE `data:`, HTTP pages, gRPC `EventEnvelope.json`,
the seat stream), byte for byte the same:

    {"seq":N,"kind":"header","header":{...}}           public (seed commitment in hex)
    {"seq":N,"kind":"event","event":{...}}             redacted for the viewer (api.redact)
    {"seq":N,"kind":"answer","answer":{...}}           only to GOD and to the seat that answered
    {"seq":N,"kind":"seed_reveal","reveal":{...}}      public (it is the last entry)
    {"seq":N,"kind":"control","control":{...}}         public: a seat goes on 托管 or comes back
    {"seq":N,"kind":"abandon","abandon":{...}}         public: the platform ended the game (a cap,
                                                       a stalled game); its game_ended follows
    {"seq":N,"kind":"other","type":KIND}               an entry kind this code does not know

`seq` is the viewer's position (positions.py: 1, 2, 3, … over what it receives), never the log's
sequence number. The shapes are typed in schema.py (and published as JSON Schema).

Why each rule:

* events reach a viewer only through `api.redact`, the rules' one redaction; the event JSON is
  msgspec's encoding of the redacted event, so the byte searches of the secrecy tests apply
  unchanged to what a browser, a bot or a gRPC client receives;
* an answer goes only to the seat that gave it (and to GOD): everyone else gets no entry at all,
  not an emptied one, because that a seat was asked can give its hand away (the engine never
  asks a seat with no legal answer: a 无懈可击 prompt says the seat holds one). The seat's answer
  names its decision by the opaque id it was shown (contracts/decision_ids.py), or by none when
  the reader holds no key: the engine's decision number would count the others' decisions;
* an entry that cannot be read (a payload that does not decode, an event type this build does
  not know) goes out as ``other`` with its kind, to every viewer who receives its kind (an
  answer nobody can tell the seat of: to the god view alone), so positions stay gap-free and
  no reader ever stops on it; it is counted (`unreadable`) and logged once per kind;
* no chain hash in the envelope: an entry's hash covers its unredacted payload, so for an entry
  a viewer sees redacted it is a digest of the secret. Transports that may send it (ReplayService
  to a viewer who sees everything) add it beside the envelope.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import msgspec

from ..eventlog.entry import (
    ABANDON,
    ANSWER,
    CONTROL,
    EVENT,
    HEADER,
    SEED_REVEAL,
    Entry,
    decode_entry,
    upgrade,
)
from ..eventlog.records import (
    Abandon,
    AnswerRecord,
    Header,
    SeatControl,
    SeedReveal,
    decode_payload,
)
from ..rules import api
from .positions import receives as receives

log = logging.getLogger(__name__)
OpaqueId = Callable[[int], int]
"""A game's decision number -> the opaque id its seats are shown (contracts/decision_ids.py)."""

_json = msgspec.json.Encoder()
KINDS = (HEADER, EVENT, ANSWER, SEED_REVEAL, CONTROL, ABANDON)  # every kind a log holds today
OTHER = "other"  # the envelope kind of an entry kind this code does not know


def header_json(h: Header) -> dict[str, Any]:
    """A header as plain JSON data (bytes as hex)."""
    return {
        "game_id": h.game_id,
        "ruleset": h.ruleset,
        "players": h.players,
        "rules_version": h.rules_version,
        "seats": [{"player": s.player, "bot": s.bot, "name": s.name} for s in h.seats],
        "seed_commitment": h.seed_commitment.hex(),
        "commitment_scheme": h.commitment_scheme,
        "options": h.options,
        "started_at_ms": h.started_at_ms,
    }


def reveal_json(r: SeedReveal) -> dict[str, Any]:
    """A seed reveal as plain JSON data (the salt as hex)."""
    return {
        "seed": r.seed,
        "salt": r.salt.hex(),
        "ended_at_ms": r.ended_at_ms,
        "winners": list(r.winners),
        "sides": list(r.sides),
    }


def _wrap(position: int, kind: str, key: str, body: bytes) -> bytes:
    return b'{"seq":%d,"kind":"%s","%s":%s}' % (position, kind.encode(), key.encode(), body)


_UNREADABLE = (msgspec.MsgspecError, ValueError, TypeError, KeyError)
unreadable: dict[str, int] = {}
"""Entries this process could not read, by kind (each kind logged once): a metric's source."""


def envelope(
    position: int, entry: Entry, viewer: int, opaque: OpaqueId | None = None
) -> bytes | None:
    """``entry`` as ``viewer`` (a seat, api.SPECTATOR or api.GOD) receives it, numbered as its
    ``position``-th entry; None when the viewer receives nothing of it (see the module
    docstring). ``opaque`` gives the answering seat its decisions' opaque ids."""
    try:
        return _envelope(position, entry, viewer, opaque)
    except _UNREADABLE as exc:
        if not unreadable.get(entry.kind):
            log.error("a %r entry could not be read, sent as kind other: %r", entry.kind, exc)
        unreadable[entry.kind] = unreadable.get(entry.kind, 0) + 1
        if not receives(viewer, entry):
            return None
        return _other(position, entry.kind)


def _other(position: int, kind: str) -> bytes:
    return b'{"seq":%d,"kind":"%s","type":%s}' % (position, OTHER.encode(), _json.encode(kind))


def _envelope(position: int, entry: Entry, viewer: int, opaque: OpaqueId | None) -> bytes | None:
    if entry.kind == EVENT:
        event = api.redact(api.decode_event(entry.payload), viewer)
        return _wrap(position, EVENT, "event", _json.encode(event))
    if entry.kind == ANSWER:
        answer = decode_payload(entry.payload, AnswerRecord)
        if viewer == api.GOD:  # the log as it is
            return _wrap(position, ANSWER, "answer", _json.encode(answer))
        if viewer != answer.seat:
            return None
        mine: dict[str, Any] = {"seat": answer.seat, "picks": answer.picks, "auto": answer.auto}
        if opaque is not None:
            mine = {"decision": opaque(answer.decision), **mine}
        return _wrap(position, ANSWER, "answer", _json.encode(mine))
    if entry.kind == HEADER:
        body = _json.encode(header_json(decode_payload(entry.payload, Header)))
        return _wrap(position, HEADER, "header", body)
    if entry.kind == SEED_REVEAL:
        body = _json.encode(reveal_json(decode_payload(entry.payload, SeedReveal)))
        return _wrap(position, SEED_REVEAL, "reveal", body)
    if entry.kind == CONTROL:
        body = _json.encode(decode_payload(entry.payload, SeatControl))
        return _wrap(position, CONTROL, "control", body)
    if entry.kind == ABANDON:
        body = _json.encode(decode_payload(entry.payload, Abandon))
        return _wrap(position, ABANDON, "abandon", body)
    return b'{"seq":%d,"kind":"%s","type":%s}' % (
        position,
        OTHER.encode(),
        _json.encode(entry.kind),
    )


def stored_envelope(
    position: int, data: bytes, viewer: int, opaque: OpaqueId | None = None
) -> bytes | None:
    """`envelope` of a stored entry's bytes (upgraded to the current schema first)."""
    return envelope(position, upgrade(decode_entry(data)), viewer, opaque)


def is_end(entry: Entry) -> bool:
    """Whether ``entry`` is the ``game_ended`` event (most events are not decoded to tell; one
    that cannot be read is not)."""
    if entry.kind != EVENT or b"game_ended" not in entry.payload:
        return False
    try:
        return type(api.decode_event(entry.payload)).__struct_config__.tag == "game_ended"
    except _UNREADABLE:
        return False


def terminal(entry: Entry) -> tuple[bool, bool]:
    """(over, closed) for one entry: the game has ended with it (nothing is secret any more) /
    the log is complete (the seed reveal, always the last entry)."""
    if entry.kind == SEED_REVEAL:
        return True, True
    return is_end(entry), False
