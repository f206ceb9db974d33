"""Finished games as rating results: read from the live log, else from the archive folder.

An archive file counts only if the platform's key signed it (`catalog.signed_archive`): a file
in the folder that is unsigned, signed by another key, edited or forged is refused (NotSigned)
and logged once per game, so no one moves a rating by dropping a file there. The key is the
environment's (`signing.platform_key`: ARENA_ARCHIVE_PUBKEY, which `arena up`, compose and the
manifests give the matchmaker); with none, archives are read unchecked, as `arena verify` does
without a key. The live log in Redis is the platform's own and is not signed.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from pathlib import Path

from ..contracts.streams import check_game_id
from ..eventlog import archive, catalog
from ..eventlog.catalog import NotSigned as NotSigned  # raised here too
from ..eventlog.entry import EVENT, HEADER, SEED_REVEAL, decode_entry, upgrade
from ..eventlog.records import Header, SeedReveal, decode_payload
from ..eventlog.signing import PublicKey, platform_key
from ..eventlog.store import EventStore
from ..rules import api
from ..rules.api import events as ev
from .modes import mode_id
from .ratings import GameResult

log = logging.getLogger(__name__)
Key = PublicKey | None | str  # "env": the environment's platform key (module docstring)
_said: OrderedDict[str, None] = OrderedDict()  # games whose refusal was logged (bounded)


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


def _key(key: Key) -> PublicKey | None:
    return platform_key() if key == "env" else key if isinstance(key, PublicKey) else None


def archived_records(data: bytes, name: str, key: Key = "env") -> list[bytes]:
    """The records of an archive file's bytes, checked against the platform key (module
    docstring); raises ArchiveDamaged or NotSigned."""
    checked = _key(key)
    if checked is None:
        return archive.records(data)
    return catalog.signed_archive(data, name, checked).records


def archived_result(path: Path, key: Key = "env") -> GameResult:
    """The result in one archive file; raises ArchiveDamaged, NotSigned or NotFinished."""
    return result_of(archived_records(path.read_bytes(), path.name, key))


async def load_result(
    store: EventStore, game: str, archive_dir: Path | None, key: Key = "env"
) -> GameResult:
    """A finished game's result: the live log if it is still in Redis, else its archive file
    (a worker archives and drops the log right after announcing the end), which must carry
    the platform's signature (NotSigned, logged once per game, otherwise)."""
    records = [data for _, data in await store.read(game)]
    if records:
        return result_of(records)
    if archive_dir is not None:
        path = catalog.archive_file(archive_dir, check_game_id(game))
        try:  # read and checked in a thread, off the loop
            stored = await asyncio.to_thread(_read_checked, path, key)
        except NotSigned as exc:
            _refused(game, exc)
            raise
        if stored is not None:
            return result_of(stored)
    raise NotFinished(f"game {game}: neither a live log nor an archive file")


def _read_checked(path: Path, key: Key) -> list[bytes] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return archived_records(data, path.name, key)


def _refused(game: str, exc: NotSigned) -> None:
    """Log a refused archive once per game (a message delivered again says nothing new)."""
    if game in _said:
        return
    _said[game] = None
    while len(_said) > 4096:
        _said.popitem(last=False)
    log.warning("ratings: game %s not rated: its archive is not the platform's (%s)", game, exc)


def scan_archive(folder: Path, key: Key = "env") -> tuple[list[GameResult], dict[str, str]]:
    """Every finished game in the archive folder that the platform key signed; returns
    (results, {file: why skipped})."""
    checked = _key(key)
    results: list[GameResult] = []
    skipped: dict[str, str] = {}
    for path in sorted(folder.glob(f"*{archive.SUFFIX}")):
        if path.name.startswith(archive.TEMP_PREFIX):
            continue  # an archive being written right now
        try:
            results.append(archived_result(path, checked))
        except FileNotFoundError:
            continue  # a temporary file renamed away since the listing
        except (archive.ArchiveDamaged, NotFinished, ValueError) as exc:
            skipped[path.name] = str(exc)
    return results, skipped
