"""Finished games as rating results: read from the live log, else from the archive folder."""

from __future__ import annotations

from pathlib import Path

from ..eventlog import archive, catalog
from ..eventlog.entry import EVENT, HEADER, SEED_REVEAL, decode_entry, upgrade
from ..eventlog.records import Header, SeedReveal, decode_payload
from ..eventlog.store import EventStore
from ..rules import api
from ..rules.api import events as ev
from .modes import mode_id
from .ratings import GameResult


class NotFinished(ValueError):
    """The records do not hold a finished game (no header, no end or no seed reveal)."""


def result_of(records: list[bytes]) -> GameResult:
    """The rating result of a finished game's stored entries (seq 1..n)."""
    if not records:
        raise NotFinished("no entries")
    head, tail = upgrade(decode_entry(records[0])), upgrade(decode_entry(records[-1]))
    if head.kind != HEADER or tail.kind != SEED_REVEAL:
        raise NotFinished("not a finished game (no header or no seed reveal)")
    header = decode_payload(head.payload, Header)
    reveal = decode_payload(tail.payload, SeedReveal)
    ended: ev.GameEnded | None = None
    for data in reversed(records[1:-1]):  # the end is the last event: scan from the back
        entry = upgrade(decode_entry(data))
        if entry.kind == EVENT:
            event = api.decode_event(entry.payload)
            if isinstance(event, ev.GameEnded):
                ended = event
                break
    if ended is None:
        raise NotFinished(f"game {header.game_id} has no game_ended event")
    return GameResult(
        game_id=header.game_id,
        mode=mode_id(header.ruleset, header.players),
        ruleset=header.ruleset,
        ended_ms=reveal.ended_at_ms,
        players=[s.player for s in header.seats],
        bots=[s.bot for s in header.seats],
        roles=list(ended.roles),
        winners=list(ended.winner_seats),
        draw=ended.draw,
    )


def archived_result(path: Path) -> GameResult:
    """The result in one archive file; raises ArchiveDamaged or NotFinished."""
    return result_of(archive.records(path.read_bytes()))


async def load_result(store: EventStore, game: str, archive_dir: Path | None) -> GameResult:
    """A finished game's result: the live log if it is still in Redis, else its archive file
    (a worker archives and drops the log right after announcing the end)."""
    records = [data for _, data in await store.read(game)]
    if records:
        return result_of(records)
    if archive_dir is not None:
        stored = await catalog.read_archived(archive_dir, game)  # in a thread, off the loop
        if stored is not None:
            return result_of(stored)
    raise NotFinished(f"game {game}: neither a live log nor an archive file")


def scan_archive(folder: Path) -> tuple[list[GameResult], dict[str, str]]:
    """Every finished game in the archive folder; returns (results, {file: why skipped})."""
    results: list[GameResult] = []
    skipped: dict[str, str] = {}
    for path in sorted(folder.glob(f"*{archive.SUFFIX}")):
        if path.name.startswith(archive.TEMP_PREFIX):
            continue  # an archive being written right now
        try:
            results.append(archived_result(path))
        except FileNotFoundError:
            continue  # a temporary file renamed away since the listing
        except (archive.ArchiveDamaged, NotFinished, ValueError) as exc:
            skipped[path.name] = str(exc)
    return results, skipped
