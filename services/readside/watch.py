"""A game's entries read straight from the store, per request: GameService's reads.

The engine worker holds each hot game's positions (positions.py, kept up to the log as it
appends) and its opaque ids, but not its entries: a read (`page`) takes the log from the store,
and a stream (`tail`) tails it. Both give the viewer's entries as the one envelope (entries.py),
numbered by its positions, held its delay behind (access.py: a spectator the table's spectator
delay while the game is live; a seat sees its own game live). The web server reads the same
games through shared feeds instead (feed.py); what a viewer receives is the same either way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from ..eventlog.entry import SEED_REVEAL, Entry, decode_entry
from ..eventlog.store import EventStore
from .access import TablePolicy, delay_for
from .clock import Clock
from .entries import OpaqueId, envelope, terminal
from .positions import Positions
from .tail import read_on

TAIL_BLOCK_MS = 1_000


@dataclass(frozen=True)
class Seen:
    """What a viewer may read of a game now: its entries as (position, envelope), its position
    after them (``version``), whether one of the entries it has ended the game (``over``), and
    whether it watches live (no delay: it may be shown the pending decision)."""

    entries: list[tuple[int, bytes]]
    version: int
    over: bool
    live: bool


class Watch:
    """The delay on a store: what a viewer may read now, and a tail that holds entries back
    until they are old enough. Entries carry their append time (the store's clock: Redis TIME
    on Redis), so ``clock`` must read the same clock (clock.ServerClock)."""

    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        policy: TablePolicy | None = None,
        archive_dir: Path | None = None,
    ) -> None:
        self.store, self.clock = store, clock
        self.policy = policy or TablePolicy()
        self.archive_dir = archive_dir  # where a finished game's entries go once its log is gone

    def delay_for(self, viewer: int, over: bool) -> int:
        """How far behind the live game ``viewer`` is held (access.delay_for)."""
        return delay_for(self.policy, viewer, over)

    async def page(
        self,
        game: str,
        viewer: int,
        head: int,
        over: bool,
        positions: Positions,
        opaque: OpaqueId | None,
    ) -> Seen:
        """Entries 1..``head`` as far as ``viewer`` may have them now (``over``: the game has
        ended as of ``head``), as its envelopes."""
        delay = self.delay_for(viewer, over)
        out: list[tuple[int, bytes]] = []
        if delay <= 0:
            for seq, data in await self.store.read(game, 0, head):
                at = positions.position(viewer, seq)
                if (e := envelope(at, decode_entry(data), viewer, opaque)) is not None:
                    out.append((at, e))
            return Seen(out, positions.position(viewer, head), over, True)
        rows = await self._released(game, head, delay)
        for seq, entry in rows:
            at = positions.position(viewer, seq)
            if (e := envelope(at, entry, viewer, opaque)) is not None:
                out.append((at, e))
        upto = rows[-1][0] if rows else 0
        return Seen(
            out, positions.position(viewer, upto), any(terminal(e)[0] for _, e in rows), False
        )

    async def _released(self, game: str, head: int, delay: int) -> list[tuple[int, Entry]]:
        """Entries 1..``head`` appended at least ``delay`` ago (the store's append times)."""
        cut = self.clock.now_ms() - delay
        out: list[tuple[int, Entry]] = []
        for seq, data, at_ms in await self.store.read_timed(game, 0, head):
            if (at_ms or 0) > cut:  # no time: written before times were kept, long ago
                break
            out.append((seq, decode_entry(data)))
        return out

    async def released(self, game: str, viewer: int, head: int, over: bool) -> tuple[int, bool]:
        """(the last log seq of 1..``head`` ``viewer`` may have now, whether the game ended by
        then): what a delayed viewer is at, without its entries."""
        delay = self.delay_for(viewer, over)
        if delay <= 0:
            return head, over
        rows = await self._released(game, head, delay)
        return (rows[-1][0] if rows else 0), any(terminal(e)[0] for _, e in rows)

    async def tail(
        self,
        game: str,
        viewer: int,
        after: int,
        upto: int,
        over: bool,
        positions: Positions,
        opaque: OpaqueId | None,
    ) -> AsyncIterator[tuple[int, bytes]]:
        """``viewer``'s entries after its position ``after``, as (position, envelope), live, each
        released once the viewer's delay has passed; ends after the seed reveal, or, with
        ``upto`` > 0, after its position min(upto, where the log is now). ``positions`` map the
        client's positions to log seqs (they must reach as far as those). A log
        archived and dropped before the tail read its end is finished from the archive file
        (its entries released as first seen: never early), and the tail ends if there is none."""
        start = positions.seq(viewer, max(0, after))
        last = positions.seq(viewer, upto) if upto > 0 else 0
        delay = self.delay_for(viewer, over)
        if last > 0:
            last = min(last, await self.store.head(game))
            if last <= start:
                return
        after, position = start, positions.position(viewer, start)
        while True:
            rows, gone = await read_on(self.store, game, after, TAIL_BLOCK_MS, self.archive_dir)
            for seq, data, at_ms in rows:
                if last > 0 and seq > last:
                    return
                if delay > 0 and at_ms is not None:
                    await self.clock.sleep_until(at_ms + delay)
                entry = decode_entry(data)
                if (e := envelope(position + 1, entry, viewer, opaque)) is not None:
                    position += 1  # counted here: entries past the positions' head come too
                    yield position, e
                after = seq
                if entry.kind == SEED_REVEAL or after == last:
                    return
            if gone:
                return
