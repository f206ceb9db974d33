"""Log entries: the envelope, its msgpack codec, the hash chain and the schema upgrade path.

An entry is `[v, kind, payload, hash]` in msgpack. `payload` is opaque here: for `event`
entries it is the engine's `encode_event` bytes; for the other kinds, a struct in records.py.

    hash(n) = SHA-256(hash(n-1) || seq u64be || v u16be || len(kind) u8 || kind || payload)

with hash(0) = 32 zero bytes. The hash covers the fields exactly as written (not a re-encoding),
so an entry upgraded to a newer schema on read still verifies against the hash it was stored
with, and no msgpack canonical form is needed for the chain to be reproducible.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Callable, Iterable, Sequence

import msgspec

SCHEMA_VERSION = 1
GENESIS = bytes(32)

HEADER = "header"
EVENT = "event"
ANSWER = "answer"
SEED_REVEAL = "seed_reveal"
CONTROL = "control"  # records.SeatControl: 托管 on or off for a seat (no engine input)
ABANDON = "abandon"  # records.Abandon: the platform ended the game (an engine input, api.abandon)


class Entry(msgspec.Struct, frozen=True, array_like=True):
    """One log entry as stored: schema version, kind, payload bytes, chained hash."""

    v: int
    kind: str
    payload: bytes
    hash: bytes


class UnsupportedSchema(ValueError):
    """An entry written by a newer schema than this code knows, or with no upgrade path."""


Upgrader = Callable[[str, bytes], tuple[str, bytes]]

UPGRADERS: dict[int, Upgrader] = {}
"""Schema v -> function turning a v entry's (kind, payload) into v+1's.

To change a payload layout: bump SCHEMA_VERSION, register the previous version's upgrader here,
and keep it forever; archives are the system of record and are never rewritten.
"""

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Entry)


_FIXED = struct.Struct(">QHB")  # seq, v, len(kind)
_SEQ, _VERSION_KIND = struct.Struct(">Q"), struct.Struct(">HB")  # _FIXED in two parts
_kinds: dict[str, bytes] = {}


def chain_hash(prev: bytes, seq: int, v: int, kind: str, payload: bytes) -> bytes:
    """The hash of entry `seq` given the previous entry's hash."""
    # One join and one sha256 call: this runs for every entry on every load, so it is kept tight.
    k = _kinds.get(kind)
    if k is None:
        k = kind.encode()
        if len(k) > 255:
            raise ValueError(f"entry kind longer than 255 bytes: {kind[:40]!r}…")
        if len(_kinds) < 64:  # kinds are a handful; a hostile file must not grow the cache
            _kinds[kind] = k
    return hashlib.sha256(b"".join((prev, _FIXED.pack(seq, v, len(k)), k, payload))).digest()


def encode_entry(entry: Entry) -> bytes:
    """Entry -> stored bytes."""
    return _encoder.encode(entry)


def decode_entry(data: bytes) -> Entry:
    """Stored bytes -> Entry, exactly as written (no upgrade). Raises msgspec.DecodeError."""
    return _decoder.decode(data)


def seal(prev_hash: bytes, first_seq: int, items: Iterable[tuple[str, bytes]]) -> list[Entry]:
    """Chain (kind, payload) items onto `prev_hash`, numbering them from `first_seq`."""
    out: list[Entry] = []
    for seq, (kind, payload) in enumerate(items, first_seq):
        prev_hash = chain_hash(prev_hash, seq, SCHEMA_VERSION, kind, payload)
        out.append(Entry(SCHEMA_VERSION, kind, payload, prev_hash))
    return out


def seal_records(
    prev_hash: bytes, first_seq: int, items: Iterable[tuple[str, bytes]]
) -> tuple[list[bytes], bytes]:
    """`seal` straight to the stored bytes: (the records, the last entry's hash; `prev_hash` for
    no items). The same bytes as `encode_entry` of each sealed entry (an array-like Entry is the
    msgpack array of its fields), without an Entry object or a call per entry: the engine seals
    every entry it appends (tests/eventlog/test_entry.py holds the two equal). The fixed part
    after the seq (v u16be | len(kind) u8 | kind) is kept per kind (`_sealing`), so an entry
    costs one join, one sha256 and one encode."""
    out: list[bytes] = []
    add, encode, seq_bytes, sha256, join = out.append, _encoder.encode, _SEQ.pack, _sha256, _join
    prefixes, v, seq = _sealing, SCHEMA_VERSION, first_seq
    last, prefix = None, b""
    for kind, payload in items:
        if kind is not last:  # (an answer's events are a run of one kind: no lookup each)
            last, prefix = kind, prefixes.get(kind) or _sealing_prefix(kind)
        prev_hash = sha256(join((prev_hash, seq_bytes(seq), prefix, payload))).digest()
        add(encode((v, kind, payload, prev_hash)))
        seq += 1
    return out, prev_hash


_sha256, _join = hashlib.sha256, b"".join
_sealing: dict[str, bytes] = {}  # kind -> v u16be | len(kind) u8 | kind, for SCHEMA_VERSION


def _sealing_prefix(kind: str) -> bytes:
    """The hashed bytes between an entry's seq and its payload (`chain_hash`), for `seal_records`;
    checks the kind as `chain_hash` does, and keeps a handful of kinds (a hostile caller must
    not grow the cache)."""
    chain_hash(GENESIS, 1, SCHEMA_VERSION, kind, b"")  # raises for a kind too long
    k = kind.encode()
    prefix = _VERSION_KIND.pack(SCHEMA_VERSION, len(k)) + k
    if len(_sealing) < 64:
        _sealing[kind] = prefix
    return prefix


def framing_crc(records: Sequence[bytes], crc: int = 0) -> int:
    """CRC-32 of stored records, each framed by its length (as the msgpack bins of a list of
    them, without the list's header), continued from `crc`: over several batches the same as
    over all their records at once. What a log's writer keeps of the bytes it sealed, so that
    the archive can tell the records it reads back are those bytes (catalog.archive_game)."""
    data = _encoder.encode(records)  # array header | (bin header | record) ...
    n = len(records)
    return zlib.crc32(memoryview(data)[1 if n < 16 else 3 if n < 0x10000 else 5 :], crc)


def chained(records: Sequence[bytes]) -> list[Entry] | None:
    """The entries of stored `records` (seq 1..n) if every one decodes, is in the current
    schema and chains from GENESIS; else None, and checks.check_chain goes through them one by
    one to say what is wrong (an older schema, needing an upgrade, also takes that way).

    `seal_records` in reverse, for the checks that run over whole logs (every game archived,
    every archive verified): the same decode and sha256 per entry as `decode_entry` and
    `chain_hash`, without their calls, the kind's encoding or a schema upgrade per entry."""
    decode = _decoder.decode
    try:
        entries = [decode(data) for data in records]
    except msgspec.MsgspecError:
        return None
    sha256, join, seq_bytes, v = hashlib.sha256, b"".join, _SEQ.pack, SCHEMA_VERSION
    prefixes: dict[str, bytes] = {}  # kind -> v u16be | len(kind) u8 | kind
    kind: str | None = None
    prefix = b""
    prev = GENESIS
    for seq, e in enumerate(entries, 1):
        if e.kind != kind:  # runs of one kind are the rule: no lookup for them
            kind = e.kind
            prefix = prefixes.get(kind, b"")
            if not prefix:
                k = kind.encode()
                if len(k) > 255:
                    return None
                prefix = prefixes[kind] = _VERSION_KIND.pack(v, len(k)) + k
        if e.v != v or sha256(join((prev, seq_bytes(seq), prefix, e.payload))).digest() != e.hash:
            return None
        prev = e.hash
    return entries


def upgrade(entry: Entry) -> Entry:
    """The entry in the current schema (its hash is kept: it covers the stored form)."""
    v, kind, payload = entry.v, entry.kind, entry.payload
    if v > SCHEMA_VERSION:
        raise UnsupportedSchema(f"entry schema v{v} is newer than this code (v{SCHEMA_VERSION})")
    while v < SCHEMA_VERSION:
        step = UPGRADERS.get(v)
        if step is None:
            raise UnsupportedSchema(f"no upgrade path from entry schema v{v}")
        kind, payload = step(kind, payload)
        v += 1
    return entry if v == entry.v else Entry(v, kind, payload, entry.hash)


def first_break(prev_hash: bytes, first_seq: int, entries: Sequence[Entry]) -> int | None:
    """Index in `entries` of the first entry whose hash does not chain, or None (an entry
    whose version or kind cannot be hashed at all breaks the chain there too)."""
    for i, e in enumerate(entries):
        try:
            expected = chain_hash(prev_hash, first_seq + i, e.v, e.kind, e.payload)
        except (struct.error, ValueError):  # a version out of two bytes, a kind too long
            return i
        if expected != e.hash:
            return i
        prev_hash = expected
    return None
