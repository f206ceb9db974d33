"""托管: who plays a person's seat — the person, or the seat's bot — kept in the game's log.

A person's seat goes on 托管 (the bot answers its decisions, exactly as for a bot seat: the engine
publishes them to the bots' stream) when the table's number of time-outs in a row is reached, or
when the person asks; it comes back when the person takes it back. A person who resigns leaves
the seat to the bot for the rest of the game.

Each change is a `control` entry (`records.SeatControl`) appended to the log, so:

- it survives any worker's restart: a worker loading the game folds the entries (`fold`);
- workers cannot disagree: a change is an append at an expected version, so a worker holding a
  stale copy of the game gets a version conflict on its next append and reloads;
- spectators and replays see when a seat was played by its bot.

A person's own default level (kept by the web server with their account) is recorded for a seat
by a control entry of reason `level`: it sets the level the seat's bot plays at, now if the seat
is on 托管 and for its later 托管, without changing who plays it. Its `hosted` says who plays the
seat as it is (unchanged), so a reader that folds only `hosted` (an older engine, a spectator's
fold, the page) folds it as nothing.

The time-outs in a row are counted from the log's answers (`auto` marks the server's default
answer for a silent seat); a seat's own answer sets the count back to zero.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..eventlog.entry import ANSWER, CONTROL, Entry
from ..eventlog.records import AnswerRecord, SeatControl, decode_payload

TIMEOUTS = "timeouts"
ASKED = "asked"
RESIGNED = "resigned"
TAKEN_BACK = "taken_back"
LEVEL = "level"  # the seat's 托管 level only: who plays it does not change


class HostingRefused(Exception):
    """A 托管 request that cannot be carried out (the reason says why)."""


@dataclass
class Hosting:
    """One game's 托管 state: the seats the bot plays for their person, the seats whose person
    resigned, and each seat's time-outs in a row. `after` is the table's setting (0 = never);
    `level` the bot level that plays a hosted seat ("": the engine's default), unless its
    person chose one (`levels`, kept in the control entries: it holds for the seat's later
    托管 too, by time-outs or a resignation)."""

    after: int = 0
    level: str = ""
    levels: dict[int, str] = field(default_factory=dict)
    hosted: set[int] = field(default_factory=set)
    resigned: set[int] = field(default_factory=set)
    timeouts: dict[int, int] = field(default_factory=dict)

    def player(self, seat: int, default: str) -> str:
        """The player id a hosted seat's decisions name for the bot workers (`bot:LEVEL`: the
        level's policy plays it; a level a worker does not serve falls back to its default):
        the level the seat's person chose, else the table's."""
        level = self.levels.get(seat) or self.level
        return f"bot:{level}" if level else default

    def apply(self, c: SeatControl) -> None:
        """Fold one control entry."""
        if c.level:
            self.levels[c.seat] = c.level
        if c.reason == LEVEL:
            return  # who plays the seat, and its time-outs in a row, stay as they are
        if c.hosted:
            self.hosted.add(c.seat)
            if c.reason == RESIGNED:
                self.resigned.add(c.seat)
        else:
            self.hosted.discard(c.seat)
        self.timeouts[c.seat] = 0

    def answered(self, rec: AnswerRecord) -> SeatControl | None:
        """Count an answer; the control entry it brings about (the time-out that turns 托管 on),
        which the caller appends in the same batch and has already been applied here."""
        if not rec.auto:
            self.timeouts[rec.seat] = 0
            return None
        n = self.timeouts.get(rec.seat, 0) + 1
        self.timeouts[rec.seat] = n
        if self.after <= 0 or n < self.after or rec.seat in self.hosted:
            return None
        c = SeatControl(rec.seat, True, TIMEOUTS)
        self.apply(c)
        return c

    def request(
        self,
        seat: int,
        hosted: bool,
        resign: bool = False,
        level: str = "",
        level_only: bool = False,
    ) -> SeatControl | None:
        """The control entry a person's request needs (None: nothing changes, the request is a
        repeat); raises HostingRefused for a seat that resigned and wants it back. `level`:
        the bot level the person chooses for the seat's 托管 ("": as before); asked of a seat
        on 托管 already, it changes the level its bot plays at. `level_only`: set the seat's
        level and nothing else (`hosted` and `resign` are not looked at): the person's default
        level recorded for their seat."""
        new_level = level if level and level != self.levels.get(seat, "") else ""
        if level_only:
            return SeatControl(seat, seat in self.hosted, LEVEL, new_level) if new_level else None
        if seat in self.resigned:
            if hosted and not new_level:
                return None
            if hosted:
                return SeatControl(seat, True, RESIGNED, new_level)
            raise HostingRefused("the seat's player resigned: its bot plays to the end")
        if resign:
            return SeatControl(seat, True, RESIGNED, level)
        if hosted == (seat in self.hosted) and not (hosted and new_level):
            return None
        return SeatControl(seat, hosted, ASKED if hosted else TAKEN_BACK, level if hosted else "")

    def fold(self, entries: Iterable[Entry]) -> None:
        """Fold the answers and control entries of a stretch of the log, in order."""
        for e in entries:
            if e.kind == CONTROL:
                self.apply(decode_payload(e.payload, SeatControl))
            elif e.kind == ANSWER:
                self.answered_quietly(decode_payload(e.payload, AnswerRecord))

    def answered_quietly(self, rec: AnswerRecord) -> None:
        """Count a logged answer without deciding anything (its control entry, if it brought
        one, follows it in the log)."""
        self.timeouts[rec.seat] = self.timeouts.get(rec.seat, 0) + 1 if rec.auto else 0
