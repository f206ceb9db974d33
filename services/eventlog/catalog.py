"""The archive folder: one `GAME.arena` file per finished game, and the catalog `catalog.jsonl`.

The archive files are the system of record; the catalog is only an index over them, so it can
be thrown away and rebuilt from the folder alone (`rebuild_catalog`, `arena catalog rebuild`).

`catalog.jsonl` is an append-only journal, one `CatalogRecord` as a JSON object per line:

    {"id":"g1","ruleset":"standard","players":["a","b"],"bots":[false,true],"start":1700000000000,
     "end":1700000090000,"winners":[1],"rules_version":"…","file":"g1.arena"}\n

(on one line; times in ms since the epoch). `archive_game` lists a game with `add_record`: one
`os.write` of the whole line (O_APPEND, then fsync) under an flock on `.catalog.lock`, after the
game's file is in place. It reads at most the journal's last line, so its cost does not grow
with the folder, and writers in other threads or processes never interleave. No byte already
in the journal is rewritten, except a torn last line (below), which was never a whole record.

Reading (`load_catalog`) takes the union of the lines, sorted by (start, id); a game on several
lines (archived again, or listed by a rebuild and then by its own archiver) is the last of
them. A last line that does not parse (torn by a crash, or caught half-written by a reader) is
ignored; the next append cuts it off, or ends it with its newline if it holds a whole record.
An unparseable line before the last one means the index is damaged, so it is rebuilt; so is a
missing one, on the next read or append. A rebuild scans the archive files and replaces the
journal atomically (write + rename) with one sorted line per game, which also compacts it.

`catalog.json` is the catalog as written before the journal: a JSON array of the same records,
rewritten whole on every archive. It is read, never written: its records are listed under the
journal's (the journal wins), so a folder from before the journal keeps working and gains a
journal with the next archived game; a rebuild folds it into the journal and removes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path

import msgspec

from . import archive
from .checks import VerifyReport, check_chain, check_origin
from .entry import HEADER, SEED_REVEAL, Entry, decode_entry, framing_crc, upgrade
from .records import Header, SeedReveal, decode_payload, reveal_matches
from .signing import PublicKey, Signer, platform_key, signer_from_env
from .store import EventStore, check_game_id

_data = itemgetter(1)  # a stored record's bytes (seq, bytes)

CATALOG = "catalog.jsonl"
"""The catalog: an append-only journal, one JSON `CatalogRecord` per line."""
LEGACY_CATALOG = "catalog.json"
"""The catalog as written before the journal (a JSON array); read, never written."""
_LOCK = ".catalog.lock"
_TAIL_CHUNK = 4096

log = logging.getLogger(__name__)


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
    names: list[str] = []  # the names people chose ("" for bots and older games)
    sides: list[str] = []  # the winning roles (SeedReveal.sides)


_DECODE_LINE = msgspec.json.Decoder(CatalogRecord)
_DECODE_LEGACY = msgspec.json.Decoder(list[CatalogRecord])
_ENCODE = msgspec.json.Encoder()


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
        names=[s.name for s in header.seats],
        sides=list(reveal.sides),
    )


class NotSigned(ValueError):
    """An archive file the platform key does not vouch for (unsigned, forged or edited)."""


def signed_archive(data: bytes, name: str, key: PublicKey) -> archive.Unpacked:
    """An archive file's contents (`name`: for messages), if the whole file unpacks, its chain
    holds and the platform `key` signed it; else ArchiveDamaged or NotSigned (unsigned, signed
    by another key, edited or forged). What the catalog lists and the ratings count."""
    unpacked = archive.unpack(data)
    if unpacked.damage is not None:
        raise unpacked.damage
    report = VerifyReport(ok=False, game_id=unpacked.game_id, entries=len(unpacked.records))
    if check_chain(unpacked.records, report) is None:
        raise archive.ArchiveDamaged(1, f"{name}: {report.divergence}")
    check_origin(report, unpacked, key)
    if report.signature != "valid":
        why = report.divergence.reason if report.divergence else report.signature
        raise NotSigned(f"{name}: {why}")
    return unpacked


def record_of(path: Path, key: PublicKey | None = None) -> CatalogRecord:
    """Catalog record of an archive file, reading only its first and last blocks; with the
    platform `key`, only for a whole file whose chain holds and that the key signed
    (NotSigned otherwise: a forged file is never listed)."""
    data = path.read_bytes()
    if key is not None:
        signed_archive(data, path.name, key)
    _, first, last = archive.ends(data)
    head, tail = upgrade(decode_entry(first)), upgrade(decode_entry(last))
    if head.kind != HEADER or tail.kind != SEED_REVEAL:
        raise archive.ArchiveDamaged(1, f"{path.name} does not hold a finished game")
    return describe(
        decode_payload(head.payload, Header), decode_payload(tail.payload, SeedReveal), path.name
    )


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    # Held by every writer of the catalog (append, rebuild), in this process or another. flock
    # belongs to the open file, so two threads of one process exclude each other as well.
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / _LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _line(record: CatalogRecord) -> bytes:
    return _ENCODE.encode(record) + b"\n"


def _ordered(records: dict[str, CatalogRecord]) -> list[CatalogRecord]:
    return sorted(records.values(), key=lambda r: (r.start, r.id))


def _parses(line: bytes) -> bool:
    try:
        _DECODE_LINE.decode(line)
    except msgspec.MsgspecError:
        return False
    return True


def _parse_journal(data: bytes, into: dict[str, CatalogRecord]) -> bool:
    """Add the journal's records to `into` (later lines win); False if a line before the last
    is unparseable (a damaged index). An unparseable last line is ignored."""
    body, _, tail = data.rpartition(b"\n")  # the complete lines; what follows the last newline
    try:  # the usual case, decoded as one JSON array: twice as fast as line by line
        complete = _DECODE_LEGACY.decode(b"[" + body.replace(b"\n", b",") + b"]")
    except msgspec.MsgspecError:
        return _parse_lines(data.split(b"\n"), into)
    into.update((r.id, r) for r in complete)
    if tail.strip():
        with contextlib.suppress(msgspec.MsgspecError):  # torn, or caught half-written
            record = _DECODE_LINE.decode(tail)
            into[record.id] = record
    return True


def _parse_lines(lines: list[bytes], into: dict[str, CatalogRecord]) -> bool:
    last = next((n for n in range(len(lines) - 1, -1, -1) if lines[n].strip()), -1)
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = _DECODE_LINE.decode(line)
        except msgspec.MsgspecError:
            if n == last:
                break  # torn by a crash, or caught half-written
            return False
        into[record.id] = record
    return True


def _read(folder: Path) -> list[CatalogRecord] | None:
    """The catalog as stored, or None if it is missing or damaged."""
    found: dict[str, CatalogRecord] = {}
    have = False
    try:
        legacy = _DECODE_LEGACY.decode((folder / LEGACY_CATALOG).read_bytes())
        found.update((r.id, r) for r in legacy)
        have = True
    except FileNotFoundError:
        pass
    except (OSError, msgspec.MsgspecError):
        return None
    try:
        journal = (folder / CATALOG).read_bytes()
        have = True
    except FileNotFoundError:
        journal = b""
    except OSError:
        return None
    if not have or not _parse_journal(journal, found):
        return None
    return _ordered(found)


def load_catalog(folder: Path) -> list[CatalogRecord]:
    """The catalog sorted by (start, id), rebuilt first if it is missing or damaged."""
    records = _read(folder)
    return records if records is not None else rebuild_catalog(folder)[0]


def rebuild_catalog(
    folder: Path, key: PublicKey | None | str = "env"
) -> tuple[list[CatalogRecord], dict[str, str]]:
    """Rewrite the catalog from the archive files alone (this also compacts it and retires an
    old `catalog.json`); returns (records sorted by (start, id), {file: why skipped}). With a
    platform key (`key`; by default the environment's, signing.platform_key) a file it did not
    sign is skipped: unsigned, forged and edited files never reach the lobby."""
    found = platform_key() if key == "env" else key
    with _locked(folder):
        records, skipped = _scan(folder, found if isinstance(found, PublicKey) else None)
        _replace(folder, records)
    return records, skipped


def _replace(folder: Path, records: list[CatalogRecord]) -> None:
    # Under the lock. Readers see the old journal or the new one, never a mix; the old-format
    # file goes only once the journal that replaces it is in place.
    records = _ordered({r.id: r for r in records})
    archive.write_atomic(folder / CATALOG, b"".join(map(_line, records)))
    archive.fsync_dir(folder)
    (folder / LEGACY_CATALOG).unlink(missing_ok=True)


def _scan(folder: Path, key: PublicKey | None) -> tuple[list[CatalogRecord], dict[str, str]]:
    records: list[CatalogRecord] = []
    skipped: dict[str, str] = {}
    for path in sorted(folder.glob(f"*{archive.SUFFIX}")):
        if path.name.startswith(archive.TEMP_PREFIX):
            continue  # another writer's file in progress; listed by that writer once in place
        try:
            records.append(record_of(path, key))
        except FileNotFoundError:
            continue  # removed since the listing
        except (archive.ArchiveDamaged, msgspec.MsgspecError, ValueError) as exc:
            skipped[path.name] = str(exc)
    return _ordered({r.id: r for r in records}), skipped


def _last_line(fd: int, size: int) -> tuple[int, bytes]:
    """(offset, bytes) of the journal's last line, with its newline if it has one."""
    buf = b""
    pos = size
    while pos > 0:
        start = max(0, pos - _TAIL_CHUNK)
        buf = os.pread(fd, pos - start, start) + buf
        pos = start
        nl = buf.rfind(b"\n", 0, len(buf) - 1)  # the last byte may be the line's own newline
        if nl >= 0:
            return pos + nl + 1, buf[nl + 1 :]
    return 0, buf


def add_record(folder: Path, record: CatalogRecord) -> None:
    """List `record` in the folder's catalog: one line appended to the journal, durably.

    Costs the same however long the journal is (it reads at most its last line). The record's
    archive file must already be in place: a catalog found missing is rebuilt from the files.
    """
    add_records(folder, [record])


def add_records(folder: Path, records: list[CatalogRecord]) -> None:
    """`add_record` for several records at once: their lines in one write and one fsync (the
    games archived in one go by `archive_game`'s writer)."""
    if not records:
        return
    path = folder / CATALOG
    with _locked(folder):
        if not path.exists() and not (folder / LEGACY_CATALOG).exists():
            # Lost (or never written): list every file, these included, in one go.
            ids = {r.id for r in records}
            _replace(
                folder, [r for r in _scan(folder, platform_key())[0] if r.id not in ids] + records
            )
            return
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            start, last = _last_line(fd, size)
            data = b"".join(map(_line, records))
            if last.strip() and not _parses(last):
                os.ftruncate(fd, start)  # a torn last line: never committed, so dropped
                size = start
            elif last and not last.endswith(b"\n"):
                data = b"\n" + data  # a whole record whose newline was lost
            try:
                if os.write(fd, data) != len(data):
                    raise OSError(f"short write to {path}")
                os.fsync(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)  # leave no fragment behind us
                raise
        finally:
            os.close(fd)


def _finished(
    game: str, records: list[bytes], sealed_crc: int | None = None
) -> tuple[Header, SeedReveal]:
    """The header and seed reveal of a finished game whose log verifies; else NotArchivable.

    `sealed_crc`: the `framing_crc` its writer kept of every record it sealed (the engine that
    played the game from its header on). Records that match it are the bytes that writer
    sealed, so they chain by construction (`seal_records`, held equal to the chain by
    tests/eventlog): only their ends are decoded. Any others are chain-checked entry by
    entry (a log taken up from another worker, or any difference at all: a CRC differs for
    every change of up to 32 bits and for all but 2^-32 of any others)."""
    entries: list[Entry] | None = None
    if sealed_crc is not None and records and framing_crc(records) == sealed_crc:
        with contextlib.suppress(msgspec.MsgspecError):
            entries = [decode_entry(records[0]), decode_entry(records[-1])]
    if entries is None:
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
    return header, reveal


Finished = tuple[str, list[bytes], "Signer | None", int | None]
"""A game to archive: its id, its stored entries (seq 1..n), the key to sign it with and the
CRC its writer kept of the records it sealed (`_finished`; None: not known)."""


def _write_and_list(games: list[Finished], folder: Path) -> list[CatalogRecord | Exception]:
    """Check, write and fsync each game's archive file, then list those written in one append
    to the catalog; each game's catalog record, or what went wrong with it (a game that fails
    holds up no other; the append failing fails every game it would have listed)."""
    out: list[CatalogRecord | Exception] = []
    for game, records, signer, sealed_crc in games:
        try:
            header, reveal = _finished(game, records, sealed_crc)
            path = archive_file(folder, game)
            archive.write_atomic(path, archive.pack(game, records, signer))
            out.append(describe(header, reveal, path.name))
        except Exception as exc:  # this game's own: NotArchivable, or its file not written
            out.append(exc)
    written = [r for r in out if isinstance(r, CatalogRecord)]
    try:
        if written:  # the files' renames on disk before the lines that list them
            archive.fsync_dir(folder)
        add_records(folder, written)
    except Exception as exc:  # the files are in place but not listed: the live logs stay
        return [exc if isinstance(r, CatalogRecord) else r for r in out]
    return out


class _Writer:
    """Archives one folder's finished games in a worker thread, one batch at a time: the games
    that finish while a batch is being written go together in the next one (one thread hop
    and one catalog fsync for them all, and one thread contending with the event loop for the
    GIL instead of one a game). 200 bot games in flight finish 2 or more at a time about half
    the time. One per event loop and folder while it has games to write (`_writers`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.waiting: list[tuple[Finished, asyncio.Future[CatalogRecord]]] = []
        self.running: asyncio.Task[None] | None = None

    @classmethod
    async def archive(cls, folder: Path, game: Finished) -> CatalogRecord:
        """Write and list `game`'s archive file with the others waiting for `folder`."""
        loop = asyncio.get_running_loop()
        writer = _writers.get((loop, folder))
        if writer is None:
            writer = _writers[loop, folder] = cls(folder)
        done: asyncio.Future[CatalogRecord] = loop.create_future()
        writer.waiting.append((game, done))
        if writer.running is None:
            writer.running = asyncio.create_task(writer._drain(loop))
        return await done

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while self.waiting:
                batch, self.waiting = self.waiting, []
                try:
                    results = await asyncio.to_thread(
                        _write_and_list, [game for game, _ in batch], self.folder
                    )
                except BaseException as exc:  # cancelled (the loop is closing), or a bug
                    batch, self.waiting = batch + self.waiting, []
                    for _, done in batch:
                        if done.done():
                            continue
                        if isinstance(exc, asyncio.CancelledError):
                            done.cancel()
                        else:
                            done.set_exception(exc)
                    raise
                for (_, done), result in zip(batch, results, strict=True):
                    if done.done():
                        continue  # its caller was cancelled: the file is written, the keys stay
                    if isinstance(result, Exception):
                        done.set_exception(result)
                    else:
                        done.set_result(result)
        finally:
            self.running = None
            _writers.pop((loop, self.folder), None)


_writers: dict[tuple[asyncio.AbstractEventLoop, Path], _Writer] = {}
"""The writers with games to write, by event loop and folder (each leaves once it is idle)."""


def archive_file(folder: Path, game: str) -> Path:
    """Where ``game``'s archive file is (or will be) in ``folder``."""
    return folder / f"{game}{archive.SUFFIX}"


async def read_archived(folder: Path, game: str) -> list[bytes] | None:
    """The records of ``game``'s archive file in ``folder``, read in a worker thread; None if
    it has none. Raises ArchiveDamaged for a file that cannot be read to its end."""
    path = archive_file(folder, check_game_id(game))
    if not path.is_file():
        return None
    return await asyncio.to_thread(lambda: archive.records(path.read_bytes()))


async def archived_after(folder: Path | None, game: str, after: int) -> list[tuple[int, bytes]]:
    """The entries of ``game``'s archive file after seq ``after``, for a tail whose live log
    was archived and dropped before it read the end: none without a folder or a file, or
    with a damaged or unreadable file (logged; the caller may ask again)."""
    if folder is None:
        return []
    try:
        stored = await read_archived(folder, game)
    except (archive.ArchiveDamaged, OSError) as exc:
        log.warning("game %s: reading its archive: %s", game, exc)
        return []
    return [(seq, data) for seq, data in enumerate(stored or [], 1) if seq > after]


async def archive_game(
    store: EventStore,
    game: str,
    folder: Path,
    *,
    delete: bool = True,
    signer: Signer | None | str = "env",
    sealed_crc: int | None = None,
) -> CatalogRecord:
    """Write a finished game's archive file, signed with the platform key (`signer`; by default
    the one ARENA_ARCHIVE_KEY names: signing.py; unsigned without one), list it in the catalog,
    then drop the live log.

    Checks the chain and the seed reveal first (not the replay: that is `verify`'s job and needs
    the engine). The checks, compression, file writes and fsyncs run in a worker thread, so the
    event loop keeps serving other games meanwhile, with the games of the folder that finish
    meanwhile (`_Writer`). The live keys are deleted only after the file is safely renamed into
    place and listed; if the caller is cancelled while the thread runs, the thread still
    finishes but the keys stay (archiving again is harmless).

    `sealed_crc`: `GameLog.sealed_crc` of the writer that sealed the whole log (the engine
    that played it), which spares the chain check when the records read back are its bytes
    (`_finished`).
    """
    records = list(map(_data, await store.read(check_game_id(game))))  # (no Python loop)
    key = signer_from_env() if signer == "env" else signer
    record = await _Writer.archive(
        folder, (game, records, key if isinstance(key, Signer) else None, sealed_crc)
    )
    if delete:
        await store.delete(game)
    return record
