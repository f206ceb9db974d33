"""What a bot seat has not yet seen, carried in its decisions message (`SeatFeed`).

A bot answers from its seat's view, folded from the seat's redacted events. Fetching those with
a StreamView call before every decision cost the engine a log read, a redaction pass and a
server stream per decision (it made heuristic bots ~25x slower through the platform than in
one process). Instead the engine, which has just produced the events, puts the ones the seat
has not been sent yet into the decision's message, redacted for that seat:

    view = msgpack {"after": A, "upto": V, "events": [[position, event], ...]}

meaning "every event the seat receives with A < position <= V, as this seat may see it" (each
event in the engine's msgpack encoding, `api.encode_event`; a public event's bytes are the very
bytes logged). Numbers are the seat's own positions (positions.py), as on every other
channel a client reaches, never log versions: a gap would count the other seats' answers. A bot
whose view of the seat is at A (or later, but not past V) folds them and is at V; any other bot
(its worker restarted, another worker answered the seat's last decision) ignores the field and
catches up with StreamView as before. So the feed is an optimisation with a correct fallback,
and nothing is lost if the engine's memory of it is: after a reload the feed is empty and
messages carry no view until the seat's next decision.

Redaction is `api.redact`, the same as every other channel: an event guarded by `seen_by` is
sent whole to the seats in it and blanked for the others. The bot worker folds the events with
the read side's fold (fold.py `SeatFold.event`), as it folds StreamView's envelopes.

Why not the one envelope (entries.py) here: this is the engine's hot path (one message per bot
decision), and the events' msgpack bytes are what the engine has just encoded for the log, so a
public event costs no encoding at all and a guarded one a single blanked copy for all the seats
outside it; JSON would cost an encode per event and a bigger decode in every bot. The content is
the same as the envelopes' (the events a seat receives, redacted by `api.redact`, numbered by
its positions), and tests/secrecy compares it between two games that differ only in a secret,
like every other channel.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import msgspec

from ..rules import api
from .positions import Positions

_ENCODER = msgspec.msgpack.Encoder()
MAX_BUFFERED = 512  # events kept per game; a seat fed from further back falls back


@dataclass
class _Buffered:
    seq: int
    event: api.Event
    whole: msgspec.Raw  # as logged: for the seats in `seen_by`, and everyone if it is public
    blank: msgspec.Raw | None = None  # redacted, for the others (the same for all of them)

    def for_seat(self, seat: int) -> msgspec.Raw:
        seen_by: list[int] | None = getattr(self.event, "seen_by", None)
        if seen_by is None or seat in seen_by:
            return self.whole
        if self.blank is None:
            self.blank = msgspec.Raw(api.encode_event(api.redact(self.event, seat)))
        return self.blank


class SeatView(msgspec.Struct, frozen=True):
    """The `view` field of a decisions message (see the module docstring)."""

    after: int  # positions of the seat (see the module docstring)
    upto: int
    events: list[tuple[int, msgspec.Raw]]  # (position, an `api.encode_event` encoding)


@dataclass
class SeatFeed:
    """One game's recent events and, per bot seat, the version it has been fed up to."""

    fed: dict[int, int] = field(default_factory=dict)  # seat -> version sent so far
    events: deque[_Buffered] = field(default_factory=deque)
    start: int = 0  # every event after this version is in `events`

    @classmethod
    def from_start(cls, seats: list[int]) -> SeatFeed:
        """A feed for a new game: every listed seat has seen nothing (version 0)."""
        return cls(fed={s: 0 for s in seats})

    def add(self, first_seq: int, events: list[api.Event], encoded: list[bytes]) -> None:
        """Remember events logged at sequence numbers first_seq, first_seq + 1, ... with their
        `api.encode_event` bytes. With no seat fed (every bot seat reads no view) nothing is
        kept: a seat fed later starts after these (`start`) and falls back before them."""
        if not self.fed:
            self.events.clear()
            self.start = max(self.start, first_seq + len(events) - 1)
            return
        for i, (e, data) in enumerate(zip(events, encoded, strict=True)):
            self.events.append(_Buffered(first_seq + i, e, msgspec.Raw(data)))
        while len(self.events) > MAX_BUFFERED:
            self.start = self.events.popleft().seq

    def view_for(self, seat: int, upto: int, positions: Positions) -> bytes | None:
        """The `view` field for `seat` as of log version `upto` (None if the feed cannot say
        what the seat has missed), numbered by the seat's `positions`; note the seat as fed up
        to `upto`."""
        after = self.fed.get(seat)
        self.fed[seat] = upto
        view = None
        if after is not None and self.start <= after <= upto:
            parts: list[tuple[int, msgspec.Raw]] = []
            for b in reversed(self.events):  # the seat needs only the newest few
                if b.seq <= after:
                    break
                if b.seq <= upto:
                    parts.append((positions.position(seat, b.seq), b.for_seat(seat)))
            parts.reverse()
            at = positions.position
            view = _ENCODER.encode(SeatView(at(seat, after), at(seat, upto), parts))
        oldest = min(self.fed.values())  # what every seat has been sent is not needed again
        while self.events and self.events[0].seq <= oldest:
            self.start = self.events.popleft().seq
        return view
