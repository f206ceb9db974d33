"""Archive files: one compressed, self-verifying file per game.

Layout:

    b"ARENALOG" | u32be index length | u32be CRC-32 of index | index (msgpack) | blocks …

The index names the game and lists the blocks; each block is the msgpack list of up to
BLOCK_SIZE stored entries, byte for byte as in the live log, compressed as the index's `format`
says: 2 (what `pack` writes since December 7th, 2026) one zstd frame with its content size and
checksum; 1 (every file written before) zlib. Readers read both, for good: the archives are the
system of record. The entries carry their own hash chain, header and seed reveal, so the file
verifies with nothing else (see verify.py).

The index also carries the platform's signature (`key`: the signing key's id, `sig`: Ed25519
over signing.statement(game id, entry count, the last entry's chain hash)); a file written
without a key has neither and is *unsigned* (signing.py says what that means). The signature
covers the entries, not their compression: a file re-packed in another format keeps it.

Why blocks rather than one stream: a damaged byte then spoils one block, and the report can
name where the damage starts instead of only "the file does not decompress" (zstd's checksum
does for a format 2 block what zlib's Adler-32 does for a format 1 one); it also lets the
catalog read a game's header and result from the first and last block alone. The block size
is the writer's choice (the index gives each block's count; files written with 64 entries a
block read as before): 256, about 25 KB of entries, compresses within 4% of one stream and
costs the least CPU, measured on 20 five-seat games of ~1,200 entries at zlib level 1 (µs an
entry: 1.61 at 64, 1.19 at 128, 1.02 at 256, 0.98 at 384, 1.07 at 512, 1.13 at 1,024; each
block pays zlib's set-up, ~16 µs, and starts with no history to match; files 9% smaller
than at 64).

Why zstd (format 2): zlib at level 1, deflate's fastest, was ~27k of the engine worker's ~337k
instructions a decision (callgrind, its archive thread). On 20 five-seat games recorded with
random answers (36,481 entries, 153 blocks of 256), compressing a block, µs of CPU an entry
(best of 15, load 12) / instructions an entry (callgrind) / compressed size against the msgpack:
zlib 1 1.00 / 6,274 / 0.486; zstd 1 0.28 / 2,713 / 0.458; zstd -1 0.22 / 2,136 / 0.459; zstd
-3 - / 1,634 / 0.493; lz4 0.14 / 1,317 / 0.535 (files 10% larger than zlib's). So zstd at -1
(ZSTD_LEVEL: the writer's choice, any level reads): files 6% smaller than format 1's for a
third of zlib's instructions; reading a block costs 618 instructions an entry against zlib's
2,254. The zstd checksum (XXH64, 4 bytes a block, 3% of the compression) is kept so that
damage is found by the block, as before, not later by the hash chain.
Blocks of 512 or 1,024 entries would compress 7% or 12% faster at zstd -1 and 2.5% or 3.7%
smaller; 256 is kept, for the catalog's reads of a game's first and last block and for naming
damage closely.
"""

from __future__ import annotations

import os
import struct
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import zstandard

if TYPE_CHECKING:
    from .signing import Signer

MAGIC = b"ARENALOG"
FORMAT = 2
"""The format `pack` writes: 2, zstd blocks. FORMATS are those read."""
FORMATS = (1, 2)
BLOCK_SIZE = 256
ZSTD_LEVEL = -1
MAX_BLOCK_BYTES = 1 << 28
"""The most a block may hold uncompressed (`pack` splits blocks to stay under it): a zstd frame
names its size before its data, and a damaged size must not make the reader allocate it."""
SUFFIX = ".arena"
TEMP_PREFIX = ".tmp-"
"""Names of `write_atomic`'s files in progress: not archives, even when they end in SUFFIX."""
_PREFIX = struct.Struct(">II")


class Block(msgspec.Struct, frozen=True, array_like=True):
    """Where a block sits: its first entry's sequence number, entry count, compressed size."""

    first: int
    count: int
    size: int


class Index(msgspec.Struct, frozen=True):
    """The archive's table of contents."""

    format: int
    game_id: str
    entries: int
    blocks: list[Block]
    key: str = ""  # the id of the platform key that signed it ("": unsigned)
    sig: bytes = b""  # Ed25519 over signing.statement(game_id, entries, last chain hash)


class ArchiveDamaged(Exception):
    """The file cannot be read from entry `entry` on (0 when the header itself is damaged)."""

    def __init__(self, entry: int, reason: str) -> None:
        super().__init__(f"entry {entry}: {reason}" if entry else reason)
        self.entry = entry
        self.reason = reason


def head(records: list[bytes]) -> bytes:
    """The chain hash the last entry carries (32 zero bytes for none): what a signature binds."""
    if not records:
        return bytes(32)
    from .entry import decode_entry

    return decode_entry(records[-1]).hash


def pack(
    game_id: str, records: list[bytes], signer: Signer | None = None, *, format: int = FORMAT
) -> bytes:
    """Archive bytes for `records` (the stored entries, seq 1..n, in order), signed by
    `signer` when given; blocks compressed as `format` says (1 only to write old-style files:
    tests, and anyone re-packing for an old reader)."""
    if format not in FORMATS:
        raise ValueError(f"unsupported archive format {format}")
    compress = _codecs.compressor.compress if format == 2 else _zlib1
    blocks: list[Block] = []
    bodies: list[bytes] = []
    for start, count, raw in _chunks(records):
        body = compress(raw)
        blocks.append(Block(start + 1, count, len(body)))
        bodies.append(body)
    key, sig = "", b""
    if signer is not None:
        from .signing import statement

        key = signer.public.key_id
        sig = signer.sign(statement(game_id, len(records), head(records)))
    return header(Index(format, game_id, len(records), blocks, key, sig)) + b"".join(bodies)


def header(index: Index) -> bytes:
    """The bytes of an archive before its blocks: the magic, the index's length and CRC-32,
    the index."""
    raw = msgspec.msgpack.encode(index)
    return MAGIC + _PREFIX.pack(len(raw), zlib.crc32(raw)) + raw


def _chunks(records: list[bytes]) -> Iterator[tuple[int, int, bytes]]:
    """(offset, count, msgpack list) of each block: BLOCK_SIZE entries, fewer where that many
    would hold more than MAX_BLOCK_BYTES."""
    start = 0
    while start < len(records):
        count = min(BLOCK_SIZE, len(records) - start)
        raw = msgspec.msgpack.encode(records[start : start + count])
        while len(raw) > MAX_BLOCK_BYTES and count > 1:
            count //= 2
            raw = msgspec.msgpack.encode(records[start : start + count])
        if len(raw) > MAX_BLOCK_BYTES:
            raise ValueError(
                f"entry {start + 1} is over an archive block's {MAX_BLOCK_BYTES} bytes"
            )
        yield start, count, raw
        start += count


def _zlib1(raw: bytes) -> bytes:
    # level 1: measured on a 1,049-entry game, 1.08 ms against 1.37 ms at 6, 3% larger (64
    # entries a block; at 256 and level 6, 1.67 µs an entry against 1.02, 6% smaller)
    return zlib.compress(raw, 1)


class _Codecs(threading.local):
    """A thread's zstd compressor and decompressor: one is not for concurrent use, and making
    one costs more than a block (tens of µs), so each thread keeps its own."""

    def __init__(self) -> None:
        self.compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)
        self.decompressor = zstandard.ZstdDecompressor()


_codecs = _Codecs()


def _unzstd(body: bytes) -> bytes:
    """A format 2 block's msgpack; raises zstandard.ZstdError when damaged."""
    size = zstandard.frame_content_size(body)
    if not 0 <= size <= MAX_BLOCK_BYTES:  # -1: the frame does not say (pack's always do)
        raise zstandard.ZstdError(f"its frame names a size of {size} bytes")
    if body[4] & 0x10:  # the frame header's unused bit, which zstd ignores: pack never sets it
        raise zstandard.ZstdError("its frame header has its unused bit set")
    return _codecs.decompressor.decompress(body, allow_extra_data=False)


def read_index(data: bytes) -> tuple[Index, int]:
    """The index and the offset of the first block. Raises ArchiveDamaged."""
    if data[: len(MAGIC)] != MAGIC:
        raise ArchiveDamaged(0, "not an Arena archive (bad magic)")
    try:
        size, crc = _PREFIX.unpack_from(data, len(MAGIC))
    except struct.error as exc:
        raise ArchiveDamaged(0, "archive header truncated") from exc
    start = len(MAGIC) + _PREFIX.size
    raw = data[start : start + size]
    if len(raw) != size or zlib.crc32(raw) != crc:
        raise ArchiveDamaged(0, "archive index damaged (CRC mismatch)")
    try:
        index = msgspec.msgpack.decode(raw, type=Index)
    except msgspec.MsgspecError as exc:
        raise ArchiveDamaged(0, f"archive index unreadable: {exc}") from exc
    if index.format not in FORMATS:
        raise ArchiveDamaged(0, f"unsupported archive format {index.format}")
    return index, start + size


def _block(data: bytes, offset: int, block: Block, format: int) -> list[bytes]:
    body = data[offset : offset + block.size]
    where = f"block of entries {block.first}-{block.first + block.count - 1}"
    try:
        raw = _unzstd(body) if format == 2 else zlib.decompress(body)
        records = msgspec.msgpack.decode(raw, type=list[bytes])
    except (zlib.error, zstandard.ZstdError, msgspec.MsgspecError) as exc:
        raise ArchiveDamaged(block.first, f"{where} damaged: {exc}") from exc
    if len(records) != block.count:
        raise ArchiveDamaged(block.first, f"{where} holds {len(records)} entries")
    return records


@dataclass
class Unpacked:
    """What could be read: the game id, the entries before any damage, and the damage; the
    signature and its key's id as the index gives them (empty: unsigned)."""

    game_id: str
    records: list[bytes]
    damage: ArchiveDamaged | None = None
    key: str = ""
    sig: bytes = b""


def unpack(data: bytes) -> Unpacked:
    """Read every entry; stops at the first damaged block and reports it (never raises)."""
    try:
        index, offset = read_index(data)
    except ArchiveDamaged as exc:
        return Unpacked("", [], exc)
    out = Unpacked(index.game_id, [], key=index.key, sig=index.sig)
    expected_first = 1
    for block in index.blocks:
        try:
            if block.first != expected_first:
                raise ArchiveDamaged(expected_first, "archive index skips entries")
            out.records.extend(_block(data, offset, block, index.format))
        except ArchiveDamaged as exc:
            out.damage = exc
            return out
        offset += block.size
        expected_first += block.count
    if len(out.records) != index.entries or offset != len(data):
        out.damage = ArchiveDamaged(len(out.records) + 1, "archive truncated or has trailing bytes")
    return out


def records(data: bytes) -> list[bytes]:
    """Every entry of a whole archive; raises its ArchiveDamaged if any block is damaged."""
    unpacked = unpack(data)
    if unpacked.damage is not None:
        raise unpacked.damage
    return unpacked.records


def ends(data: bytes) -> tuple[str, bytes, bytes]:
    """(game id, first entry, last entry) reading only the first and last blocks."""
    index, offset = read_index(data)
    if not index.blocks:
        raise ArchiveDamaged(1, "archive has no entries")
    first = _block(data, offset, index.blocks[0], index.format)
    last_offset = offset + sum(b.size for b in index.blocks[:-1])
    last = _block(data, last_offset, index.blocks[-1], index.format)
    return index.game_id, first[0], last[-1]


def sweep_temp(folder: Path, older_than_s: float = 600.0) -> int:
    """Remove the temp files of `write_atomic` that a killed writer left in ``folder`` (one
    SIGKILL mid-write leaves one for good; readers skip them by TEMP_PREFIX): those older than
    ``older_than_s``, far past any live write. Returns how many went."""
    gone = 0
    cutoff = time.time() - older_than_s
    try:
        names = [p for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX)]
    except OSError:  # no folder yet, or not readable: nothing to sweep
        return 0
    for p in names:
        try:
            if p.stat().st_mtime < cutoff:
                p.unlink()
                gone += 1
        except OSError:  # another engine swept it first
            continue
    return gone


def fsync_dir(folder: Path) -> None:
    """Make the renames into `folder` durable: by POSIX a rename is on disk once its directory
    is fsynced, not its file (ext4's journal happens to commit it with the next fsync)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a temp file and rename, so readers never see half a file
    (durable once its folder is fsynced too: `fsync_dir`, once for a batch of files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
