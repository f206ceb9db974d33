"""Per-viewer positions: each viewer numbers the entries it receives 1, 2, 3, … with no gaps.

A game's log numbers every entry (its `seq`), but a viewer does not receive every entry: another
seat's answer is withheld from it entirely (that a seat was asked can give its hand away). Were
a viewer's entries numbered by `seq`, the gaps would count the answers it was not sent: how
many times the others were asked, declined a 无懈可击 prompt, and so on. So every channel numbers
what it sends by the viewer's own position instead:

    position(viewer, seq) = how many of the entries 1..seq the viewer receives

A seat receives every entry but the other seats' answers; a spectator every entry but the
answers; the god view everything (its positions are the seqs). Positions are what clients see
and send back (resume after a position, catch up to a decision's version); the servers map them
to log versions with `seq` and never show a viewer a seq.

Viewers are numbered as in services.rules.api: a seat (>= 0), SPECTATOR (-1), GOD (-2).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import msgspec

from ..eventlog.entry import ANSWER, Entry, decode_entry
from ..eventlog.records import AnswerRecord, decode_payload
from ..rules.api import GOD

NOBODY = -3  # the "seat" of an answer entry that cannot be read: only the god view gets it


def answer_seat(entry: Entry) -> int | None:
    """The seat an answer entry answers for (None for every other kind: everyone gets those;
    NOBODY for an answer that cannot be read: whose it is is unknown, so no seat gets it)."""
    if entry.kind != ANSWER:
        return None
    try:
        return decode_payload(entry.payload, AnswerRecord).seat
    except (msgspec.MsgspecError, ValueError, TypeError):
        return NOBODY


def receives(viewer: int, entry: Entry) -> bool:
    """Whether ``viewer`` is sent ``entry`` at all (redacted or not)."""
    seat = answer_seat(entry)
    return seat is None or viewer in (seat, GOD)


class Positions:
    """Where a game's answer entries lie, by seat: enough to map any viewer's position to a log
    version and back. Entries are added in log order (`add`, `add_entries`); a gap or a repeat
    is ignored, so a reader can feed whatever it reads."""

    def __init__(self) -> None:
        self.head = 0  # the last seq added
        self._answers: list[int] = []  # seqs of the answer entries, increasing
        self._by_seat: dict[int, list[int]] = {}  # the same, per answering seat

    def add(self, seq: int, answer_seat: int | None) -> None:
        """Entry ``seq`` (the one after ``head``) is an answer of ``answer_seat``, or not one."""
        if seq != self.head + 1:
            return
        self.head = seq
        if answer_seat is not None:
            self._answers.append(seq)
            self._by_seat.setdefault(answer_seat, []).append(seq)

    def add_many(self, seq: int, count: int) -> None:
        """Entries ``seq`` .. ``seq + count - 1``, none of them an answer: `add` of each with
        None, in one step (the engine adds every entry it appends)."""
        if seq == self.head + 1 and count > 0:
            self.head = seq + count - 1

    def add_answer(self, seq: int, seat: int, count: int) -> None:
        """`add(seq, seat)` then `add_many(seq + 1, count)`: an answer and the ``count``
        entries after it that are not answers, in one call (the engine's every answer)."""
        if seq == self.head + 1:
            self.head = seq
            self._answers.append(seq)
            own = self._by_seat.get(seat)
            if own is None:
                self._by_seat[seat] = [seq]
            else:
                own.append(seq)
        if count > 0 and seq == self.head:
            self.head = seq + count

    def add_entries(self, rows: Iterable[tuple[int, Entry]]) -> None:
        """Add decoded entries with their seqs."""
        for seq, entry in rows:
            self.add(seq, answer_seat(entry))

    def add_records(self, rows: Iterable[tuple[int, bytes]]) -> None:
        """Add stored entries (their bytes) with their seqs."""
        for seq, data in rows:
            if seq == self.head + 1:
                self.add(seq, answer_seat(decode_entry(data)))

    def position(self, viewer: int, seq: int) -> int:
        """How many of entries 1..``seq`` ``viewer`` receives (``seq`` at most ``head``)."""
        if seq >= self.head:  # the usual question: where the viewer is now (no search)
            seq = self.head
            if viewer == GOD:
                return seq
            own = self._by_seat.get(viewer)
            return seq - len(self._answers) + (len(own) if own else 0)
        seq = max(0, seq)
        if viewer == GOD:
            return seq
        withheld = bisect.bisect_right(self._answers, seq)
        own = self._by_seat.get(viewer)
        if own:
            withheld -= bisect.bisect_right(own, seq)
        return seq - withheld

    def seq(self, viewer: int, position: int) -> int:
        """The seq of ``viewer``'s ``position``-th entry (0 for position 0; ``head`` for a
        position beyond the viewer's last one). Every entry after it that the viewer receives
        has a higher position."""
        if position <= 0:
            return 0
        if position > self.position(viewer, self.head):
            return self.head
        lo, hi = position, self.head  # position(seq) <= seq, and it grows by 0 or 1 a step
        while lo < hi:
            mid = (lo + hi) // 2
            if self.position(viewer, mid) < position:
                lo = mid + 1
            else:
                hi = mid
        return lo


def positions_of(rows: Iterable[tuple[int, bytes]]) -> Positions:
    """Positions over stored entries (seq, bytes) from the first."""
    p = Positions()
    p.add_records(rows)
    return p
