"""Reading a game's log live, as every tail does (the web server's feeds, GameService's streams).

The engine archives a finished game and deletes its live log at once, so a game's last entries
and that deletion can fall between two reads of a tail: the tail then blocks on a stream that
no longer exists. So after an empty read the tail asks whether the log is gone, and reads the
rest from the archive file (the archive keeps no append times: those entries are released as
first seen, never early).
"""

from __future__ import annotations

from pathlib import Path

from ..eventlog.catalog import archived_after
from ..eventlog.store import EventStore, TimedRecord


async def read_on(
    store: EventStore, game: str, after: int, block_ms: int, archive_dir: Path | None
) -> tuple[list[TimedRecord], bool]:
    """(the entries of ``game`` after seq ``after`` appended within ``block_ms``, whether the
    live log is gone). A gone log's rest comes from its archive file in ``archive_dir``, with no
    append time; none if there is no file yet (or no folder): the caller may ask again."""
    rows = await store.tail_timed(game, after, block_ms)
    if rows or await store.head(game):
        return rows, False
    rest = await archived_after(archive_dir, game, after)
    return [(seq, data, None) for seq, data in rest], True
