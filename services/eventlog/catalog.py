"""The archive folder: one `GAME.arena` file per finished game, plus `catalog.json`.

The archive files are the system of record; the catalog is only an index over them, so it can
be thrown away and rebuilt from the folder alone (`rebuild_catalog`).
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

import msgspec

from . import archive
from .entry import HEADER, SEED_REVEAL, decode_entry, upgrade
from .records import Header, SeedReveal, decode_payload, reveal_matches
from .store import EventStore, check_game_id
from .verify import VerifyReport, check_chain

CATALOG = "catalog.json"


class CatalogRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One finished game as the catalog lists it (times in ms since the epoch)."""

    id: str
    ruleset: str
    players: list[str]
    bots: list[bool]
    start: int
    end: int
    winners: list[int]
    rules_version: str
    file: str


class NotArchivable(Exception):
    """The game cannot be archived (not finished, or its log does not verify)."""


def describe(header: Header, reveal: SeedReveal, file: str) -> CatalogRecord:
    """The catalog record for a game with this header and reveal, stored in `file`."""
    return CatalogRecord(
        id=header.game_id,
        ruleset=header.ruleset,
        players=[s.player for s in header.seats],
        bots=[s.bot for s in header.seats],
        start=header.started_at_ms,
        end=reveal.ended_at_ms,
        winners=list(reveal.winners),
        rules_version=header.rules_version,
        file=file,
    )


def record_of(path: Path) -> CatalogRecord:
    """Catalog record of an archive file, reading only its first and last blocks."""
    _, first, last = archive.ends(path.read_bytes())
    head, tail = upgrade(decode_entry(first)), upgrade(decode_entry(last))
    if head.kind != HEADER or tail.kind != SEED_REVEAL:
        raise archive.ArchiveDamaged(1, f"{path.name} does not hold a finished game")
    return describe(
        decode_payload(head.payload, Header), decode_payload(tail.payload, SeedReveal), path.name
    )


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    # Several workers may archive at once; the catalog is a read-modify-write file.
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".catalog.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _write(folder: Path, records: list[CatalogRecord]) -> None:
    records = sorted(records, key=lambda r: (r.start, r.id))
    archive.write_atomic(folder / CATALOG, msgspec.json.format(msgspec.json.encode(records)))


def load_catalog(folder: Path) -> list[CatalogRecord]:
    """The catalog, rebuilt first if it is missing or unreadable."""
    try:
        return msgspec.json.decode((folder / CATALOG).read_bytes(), type=list[CatalogRecord])
    except (OSError, msgspec.MsgspecError):
        return rebuild_catalog(folder)[0]


def rebuild_catalog(folder: Path) -> tuple[list[CatalogRecord], dict[str, str]]:
    """Rebuild catalog.json from the archive files; returns (records, {file: why skipped})."""
    with _locked(folder):
        records, skipped = _scan(folder)
        _write(folder, records)
    return records, skipped


def _scan(folder: Path) -> tuple[list[CatalogRecord], dict[str, str]]:
    records: list[CatalogRecord] = []
    skipped: dict[str, str] = {}
    for path in sorted(folder.glob(f"*{archive.SUFFIX}")):
        try:
            records.append(record_of(path))
        except (archive.ArchiveDamaged, msgspec.MsgspecError, ValueError) as exc:
            skipped[path.name] = str(exc)
    return records, skipped


async def archive_game(
    store: EventStore, game: str, folder: Path, *, delete: bool = True
) -> CatalogRecord:
    """Write a finished game's archive file, list it in the catalog, then drop the live log.

    Checks the chain and the seed reveal first (not the replay: that is `verify`'s job and needs
    the engine). The live keys are deleted only after the file is safely renamed into place.
    """
    records = [data for _, data in await store.read(check_game_id(game))]
    report = VerifyReport(ok=False, game_id=game, entries=len(records))
    entries = check_chain(records, report)
    if entries is None or not entries:
        raise NotArchivable(f"game {game}: {report.divergence or 'no entries'}")
    if entries[0].kind != HEADER or entries[-1].kind != SEED_REVEAL:
        raise NotArchivable(f"game {game} has not finished (no seed reveal)")
    header = decode_payload(entries[0].payload, Header)
    reveal = decode_payload(entries[-1].payload, SeedReveal)
    if not reveal_matches(header, reveal):
        raise NotArchivable(f"game {game}: revealed seed does not match the commitment")
    name = f"{game}{archive.SUFFIX}"
    archive.write_atomic(folder / name, archive.pack(game, records))
    record = describe(header, reveal, name)
    with _locked(folder):
        try:
            known = msgspec.json.decode((folder / CATALOG).read_bytes(), type=list[CatalogRecord])
        except (OSError, msgspec.MsgspecError):
            known = _scan(folder)[0]  # lost or damaged index: rebuild it from the files
        _write(folder, [r for r in known if r.id != game] + [record])
    if delete:
        await store.delete(game)
    return record
