"""Choosing tables from the waiting tickets of one mode: pure, no Redis, no clock.

Oldest ticket first: it anchors a table and takes the waiting tickets whose ratings are closest
to its own, provided each pair is inside both tickets' windows (a window widens the longer its
ticket waits, so a newcomer is not dragged into a wide match it did not wait for). When the
anchor has waited past the mode's bot wait and enough humans are in reach, bots fill the rest.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from .modes import Policy


@dataclass(frozen=True)
class Waiting:
    """A queued ticket as the matcher sees it."""

    ticket: str
    rating: float
    enqueued_ms: int


@dataclass(frozen=True)
class Table:
    """A table to form: the humans' tickets (closest rating first after the anchor) and bots."""

    tickets: tuple[str, ...]
    bots: int


def form_tables(
    waiting: Sequence[Waiting], players: int, policy: Policy, now_ms: int
) -> list[Table]:
    """Tables for `waiting` at `now_ms`; no ticket is in two of them."""
    by_age = sorted(waiting, key=lambda w: (w.enqueued_ms, w.ticket))
    by_rating = sorted(waiting, key=lambda w: (w.rating, w.ticket))
    keys = [w.rating for w in by_rating]
    taken: set[str] = set()
    tables: list[Table] = []

    def window(w: Waiting) -> float:
        return policy.window_at(now_ms - w.enqueued_ms)

    for anchor in by_age:
        if anchor.ticket in taken:
            continue
        reach = window(anchor)
        lo = bisect.bisect_left(keys, anchor.rating - reach)
        hi = bisect.bisect_right(keys, anchor.rating + reach)
        near = [
            w
            for w in by_rating[lo:hi]
            if w.ticket not in taken
            and w.ticket != anchor.ticket
            and abs(w.rating - anchor.rating) <= window(w)
        ]
        near.sort(key=lambda w: (abs(w.rating - anchor.rating), w.enqueued_ms, w.ticket))
        if len(near) + 1 >= players:
            chosen = [anchor, *near[: players - 1]]
        elif (
            policy.bot_after_ms > 0
            and now_ms - anchor.enqueued_ms >= policy.bot_after_ms
            and len(near) + 1 >= policy.min_humans
        ):
            chosen = [anchor, *near]
        else:
            continue
        taken.update(w.ticket for w in chosen)
        tables.append(Table(tuple(w.ticket for w in chosen), players - len(chosen)))
    return tables
