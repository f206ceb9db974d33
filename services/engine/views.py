"""Log entries and decisions as a viewer may see them (protobuf messages), and what a viewer may
read of a game's log now (`Watch`: the spectator delay).

What GameService sends, and why:

* events redacted for the viewer (`api.redact`);
* an answer only to the seat that gave it; everyone else gets no envelope for it at all, not an
  emptied one: that a seat was asked at all can give a hand away (the engine never asks a seat
  with no legal answer, so a 无懈可击 prompt says the seat holds one);
* no chain hash, to anyone: an entry's hash covers its unredacted payload, so for an entry the
  viewer sees redacted it is a digest of the secret (a hidden role is one of four guesses, a
  hidden draw of one or two cards one of some thousands). ReplayService sends hashes to the god
  view and once the game is over; GameService has no god view;
* a spectator (no seat token) is held the engine's spectator delay behind the live game, like
  the replay server's spectators: entries appended less than the delay ago are not released,
  and a delayed spectator is shown no pending decision (it is live, ahead of its events);
* no log sequence number and no decision number: each viewer's entries are numbered by its own
  position (1, 2, 3, … over what it receives; eventlog/positions.py), and decisions carry
  their opaque ids (contracts/decision_ids.py), so no gap counts what went to others.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ..contracts.decision_ids import DecisionIds
from ..eventlog.catalog import archived_after
from ..eventlog.entry import ANSWER, CONTROL, EVENT, HEADER, SEED_REVEAL, Entry, decode_entry
from ..eventlog.records import AnswerRecord, Header, SeatControl, SeedReveal, decode_payload
from ..eventlog.store import EventStore
from ..proto_gen.arena.v1 import common_pb2
from ..readside.clock import Clock
from ..rules import api
from ..rules.api import decision_visible


def envelope(
    position: int, entry: Entry, viewer: int, ids: DecisionIds
) -> common_pb2.EventEnvelope | None:
    """One entry for `viewer` (seat, api.SPECTATOR or api.GOD) as its `position`-th, or None
    when the viewer gets nothing of it (another seat's answer); see the module docstring."""
    payload: bytes
    if entry.kind == EVENT:
        event = api.redact(api.decode_event(entry.payload), viewer)
        payload = msgspec.json.encode(event)
        kind = getattr(event, "__struct_config__").tag  # noqa: B009
    elif entry.kind == ANSWER:
        rec = decode_payload(entry.payload, AnswerRecord)
        if viewer not in (rec.seat, api.GOD):
            return None
        payload = msgspec.json.encode(
            {
                "decision": ids.opaque(rec.decision),
                "seat": rec.seat,
                "picks": rec.picks,
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
    return common_pb2.EventEnvelope(seq=position, type=str(kind), payload_json=payload.decode())


def may_see(game: api.Game, d: api.Decision, viewer: int) -> bool:
    """Whether ``viewer`` may learn that ``d`` is pending at all: being asked can give a hand
    away (a 无懈可击 prompt), so other viewers see only the public kinds (rules' views)."""
    return decision_visible(d.kind, d.seat, game.current, viewer)


def decision(
    game_id: str, d: api.Decision, viewer: int, *, id: int, version: int
) -> common_pb2.Decision:
    """A decision for `viewer`: options, info and their bounds only for the seat that decides
    (another viewer gets who is asked and the kind: a targets decision's `max` is its card's
    target count or its number of legal targets, a hint at a card that may go back into the
    hand unseen); `id` is the decision's opaque id, `version` the viewer's position."""
    mine = viewer == d.seat
    return common_pb2.Decision(
        game_id=game_id,
        id=id,
        seat=d.seat,
        kind=d.kind,
        options=list(d.options) if mine else [],
        min=d.min if mine else 0,
        max=d.max if mine else 0,
        declinable=d.declinable if mine else False,
        info_json=msgspec.json.encode(d.info).decode() if mine else "",
        version=version,
    )


@dataclass(frozen=True)
class Released:
    """What a viewer may read of a game now: entries 1..`upto`, whether one of them ended the
    game, and whether the viewer watches live (no delay: it may be shown the pending decision)."""

    entries: list[tuple[int, Entry]]
    upto: int
    over: bool
    live: bool


def _ends(entry: Entry) -> bool:
    return entry.kind == SEED_REVEAL or (
        entry.kind == EVENT and b"game_ended" in entry.payload and _is_end(entry)
    )


def _is_end(entry: Entry) -> bool:
    return type(api.decode_event(entry.payload)).__struct_config__.tag == "game_ended"


class Watch:
    """The spectator delay on a store: what a viewer may read, and a tail that holds entries
    back until they are old enough. Entries carry their append time (the store's clock: Redis
    TIME on Redis), so `clock` must read the same clock (readside.clock.ServerClock)."""

    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        spectator_delay_ms: int = 0,
        archive_dir: Path | None = None,
    ) -> None:
        self.store, self.clock = store, clock
        self.spectator_delay_ms = max(0, spectator_delay_ms)
        self.archive_dir = archive_dir  # where a finished game's entries go once its log is gone

    def delay_for(self, viewer: int) -> int:
        """How far behind the live game `viewer` is held (spectators only; a seat sees its own
        game live)."""
        return self.spectator_delay_ms if viewer == api.SPECTATOR else 0

    async def read(self, game: str, viewer: int, head: int, over: bool) -> Released:
        """Entries 1..head as far as `viewer` may have them now (`over`: the game has ended as
        of `head`)."""
        delay = self.delay_for(viewer)
        if delay <= 0:
            rows = await self.store.read(game, 0, head)
            return Released([(s, decode_entry(d)) for s, d in rows], head, over, True)
        cut = self.clock.now_ms() - delay
        entries: list[tuple[int, Entry]] = []
        ended = False
        for seq, data, at_ms in await self.store.read_timed(game, 0, head):
            if (at_ms or 0) > cut:  # no time: written before times were kept, long ago
                break
            entry = decode_entry(data)
            ended = ended or _ends(entry)
            entries.append((seq, entry))
        upto = entries[-1][0] if entries else 0
        return Released(entries, upto, ended, False)

    async def tail(
        self, game: str, viewer: int, after: int, upto: int = 0
    ) -> AsyncIterator[tuple[int, Entry]]:
        """Entries after `after`, live, each released once the viewer's delay has passed; ends
        after the seed reveal, or, with `upto`, after entry min(upto, the head now). A log
        archived and dropped before the tail read its end is finished from the archive file
        (its entries released as first seen: never early), and the tail ends if there is none."""
        delay = self.delay_for(viewer)
        if upto > 0:
            upto = min(upto, await self.store.head(game))
            if upto <= after:
                return
        while True:
            rows = await self.store.tail_timed(game, after, 1000)
            gone = not rows and await self.store.head(game) == 0
            if gone:  # archived and dropped: the rest, if any, is in the archive file
                now = self.clock.now_ms()
                rest = await archived_after(self.archive_dir, game, after)
                rows = [(seq, data, now) for seq, data in rest]
            for seq, data, at_ms in rows:
                if upto > 0 and seq > upto:
                    return
                if delay > 0 and at_ms is not None:
                    await self.clock.sleep_until(at_ms + delay)
                entry = decode_entry(data)
                yield seq, entry
                after = seq
                if entry.kind == SEED_REVEAL or after == upto:
                    return
            if gone:
                return
