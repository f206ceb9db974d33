"""The fold of a seat's view: the one reader of a seat's entries, for every consumer.

A seat's view (services.rules views: its own hand, role and general; every seat's public state)
is folded from the events the seat receives, redacted for it (api.redact, then api.fold_view).
`SeatFold` does that from whatever form the entries arrive in:

* `envelope`: the one envelope's JSON (entries.py), as GameService, the replay server and the
  seat stream send it (a bot worker catching up, any client);
* `entry`: a stored log entry, redacted here for the seat (the web server's own fold of a seat,
  the engine's view for a bot's worlds);
* `event`: an event already redacted for the seat (the bot feed, botfeed.py).

Every entry kind a log can hold is accepted: events are folded, ``control`` entries say who
plays a seat (托管: `hosted`), the seed reveal closes the log, and every other kind (header,
answers, the platform's abandon, a kind this code does not know) holds nothing for the view and
is stepped over (an abandoned game's end is the game_ended event that follows its entry). An
entry that cannot be read (malformed JSON, an event type this build does not know) is stepped
over too, counted in `unreadable` and logged once per fold: the reader plays on with what it
could read rather than asking for the same entry forever (the 托管 freeze of issue 39: a bot's
fold that did not know ``control`` entries retried the decision 18,960 times).

Entries are numbered by the caller (a seat's positions, or the log's seqs, as long as they
grow): a number at or below `at` is a repeat (a resumed stream) and changes nothing.
"""

from __future__ import annotations

import logging

import msgspec

from ..eventlog.entry import CONTROL, EVENT, SEED_REVEAL, Entry, UnsupportedSchema, upgrade
from ..eventlog.records import SeatControl, decode_payload
from ..rules import api
from . import schema

log = logging.getLogger(__name__)
_UNREADABLE = (msgspec.MsgspecError, UnsupportedSchema, ValueError, TypeError, KeyError)


class SeatFold:
    """One viewer's view folded from its entries (see the module docstring); `name` says whose
    in the one log line an unreadable entry gets."""

    def __init__(self, viewer: int, name: str = "") -> None:
        self.viewer = viewer
        self.name = name
        self.view = api.new_view(viewer)
        self.at = 0  # the number of the last entry folded or stepped over
        self.hosted: set[int] = set()  # seats a bot plays for their person (托管)
        self.over = False  # a game_ended event or the seed reveal was folded
        self.closed = False  # the seed reveal was folded: no entry follows
        self.unreadable = 0  # entries stepped over because they could not be read

    def _fresh(self, at: int) -> bool:
        if at <= self.at:
            return False
        self.at = at
        return True

    def _unreadable(self, at: int, what: str, exc: BaseException) -> None:
        if not self.unreadable:
            log.error("%s: entry %d (%s) unreadable, stepped over: %s", self.name, at, what, exc)
        self.unreadable += 1

    def event(self, at: int, e: api.Event) -> api.Event | None:
        """Fold entry ``at``, an event already redacted for the viewer; returns it (None for a
        repeat)."""
        if not self._fresh(at):
            return None
        api.fold_view(self.view, e)
        self.over = self.over or self.view.over
        return e

    def _control(self, seat: int, hosted: bool) -> None:
        (self.hosted.add if hosted else self.hosted.discard)(seat)

    def _reveal(self) -> None:
        self.over = self.closed = True

    def envelope(self, at: int, data: bytes | str) -> api.Event | None:
        """Fold the envelope JSON of entry ``at``; returns the event it carried, if any."""
        if at <= self.at:
            return None
        try:
            env = schema.decode(data)
        except _UNREADABLE as exc:
            self.at = at
            self._unreadable(at, "envelope", exc)
            return None
        if isinstance(env, schema.EventEntry):
            return self.event(at, env.event)
        self.at = at
        if isinstance(env, schema.ControlEntry):
            self._control(env.control.seat, env.control.hosted)
        elif isinstance(env, schema.RevealEntry):
            self._reveal()
        return None

    def entry(self, at: int, entry: Entry) -> api.Event | None:
        """Fold stored entry ``at``, redacting an event for the viewer here; returns the
        redacted event, if it was one."""
        if at <= self.at:
            return None
        try:
            entry = upgrade(entry)
            if entry.kind == EVENT:
                e = api.redact(api.decode_event(entry.payload), self.viewer)
                return self.event(at, e)
            if entry.kind == CONTROL:
                c = decode_payload(entry.payload, SeatControl)
                self._control(c.seat, c.hosted)
        except _UNREADABLE as exc:
            self.at = at
            self._unreadable(at, entry.kind, exc)
            return None
        self.at = at
        if entry.kind == SEED_REVEAL:
            self._reveal()
        return None
