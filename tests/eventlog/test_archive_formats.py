"""Archive formats: files of format 1 (zlib blocks, everything written before December 7th,
2026) read, verify, list and replay for good beside those of format 2 (zstd blocks, what
`pack` writes now); damage in either is named by the block it spoils."""

from __future__ import annotations

import asyncio
import hashlib
import struct
from pathlib import Path

import msgspec
import pytest
import zstandard
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from services.cli import main as arena
from services.eventlog import InMemoryEventStore, archive
from services.eventlog.catalog import (
    archive_game,
    load_catalog,
    read_archived,
    rebuild_catalog,
    record_of,
)
from services.eventlog.signing import PublicKey, Signer, keep_in
from services.replay import Replay
from services.rules import api
from services.rules.api import SPECTATOR
from services.verify import Engine, record_game, verify

from . import fake_engine
from .test_signed_archives import _with_index

ENGINE: Engine = fake_engine  # type: ignore[assignment]
RULES: Engine = api  # type: ignore[assignment]

FIXTURE = Path(__file__).parent / "data" / "format1.arena"
"""Written by archive.pack as it was at b2460ba (format 1, before zstd), 8 entries a block:
the fake engine's 4-seat game "f1" of seed 8, signed by the Ed25519 key whose private bytes
are 0, 1, …, 31 (data/README.md says how it was written)."""
FIXTURE_KEY = PublicKey.from_hex("03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8")
FIXTURE_SHA256 = "ced2c9e208ea6a7c194bb39ff4de04c2ef22a033235800293174d52cf9d8891e"
"""Of the fixture's 43 entries, joined: what it held when it was written."""


def _flip(data: bytes, at: int, mask: int = 0x40) -> bytes:
    bad = bytearray(data)
    bad[at] ^= mask
    return bytes(bad)


def _block_offsets(data: bytes) -> list[tuple[archive.Block, int]]:
    index, offset = archive.read_index(data)
    out = []
    for block in index.blocks:
        out.append((block, offset))
        offset += block.size
    return out


def test_the_format_1_fixture_reads_verifies_and_lists(tmp_path: Path) -> None:
    data = FIXTURE.read_bytes()
    index, _ = archive.read_index(data)
    assert index.format == 1 and index.game_id == "f1" and index.entries == 43
    assert len(index.blocks) == 6 and index.key == FIXTURE_KEY.key_id
    records = archive.records(data)
    assert hashlib.sha256(b"".join(records)).hexdigest() == FIXTURE_SHA256
    assert archive.ends(data) == ("f1", records[0], records[-1])
    report = verify(FIXTURE, ENGINE, key=FIXTURE_KEY)
    assert report.ok and report.signature == "valid", report.summary()
    folder = tmp_path / "archive"
    folder.mkdir()
    (folder / "f1.arena").write_bytes(data)
    assert record_of(folder / "f1.arena", FIXTURE_KEY).id == "f1"
    assert asyncio.run(read_archived(folder, "f1")) == records
    rebuild_catalog(folder)
    assert [r.id for r in load_catalog(folder)] == ["f1"]
    # The signature binds the entries, not their compression: re-packed as format 2, it holds.
    index2 = archive.read_index(archive.pack("f1", records, format=2))[0]
    again = _with_index(archive.pack("f1", records, format=2), key=index.key, sig=index.sig)
    assert index2.format == 2 and archive.records(again) == records
    assert verify(again, ENGINE, key=FIXTURE_KEY).signature == "valid"


def test_format_1_as_written_today_is_the_fixture_byte_for_byte(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`pack(format=1)` is the old code path: the fixture's entries, blocks and key give the
    fixture's bytes again (zlib and Ed25519 are deterministic)."""
    data = FIXTURE.read_bytes()
    signer = Signer(Ed25519PrivateKey.from_private_bytes(bytes(range(32))))
    assert signer.public.key_id == FIXTURE_KEY.key_id
    monkeypatch.setattr(archive, "BLOCK_SIZE", 8)
    assert archive.pack("f1", archive.records(data), signer, format=1) == data


def test_damage_in_the_format_1_fixture_names_its_block() -> None:
    data = FIXTURE.read_bytes()
    for block, offset in _block_offsets(data):
        unpacked = archive.unpack(_flip(data, offset + block.size // 2))
        assert unpacked.damage is not None and unpacked.damage.entry == block.first
        assert f"entries {block.first}-{block.first + block.count - 1} damaged" in str(
            unpacked.damage
        )
        assert len(unpacked.records) == block.first - 1  # everything before it still reads


async def test_both_formats_round_trip_verify_and_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryEventStore()
    await record_game(store, "g1", ENGINE, "fake", 4, seed=8)
    records = [d for _, d in await store.read("g1")]
    monkeypatch.setattr(archive, "BLOCK_SIZE", 8)
    for fmt in (1, 2):
        data = archive.pack("g1", records, format=fmt)
        index, _ = archive.read_index(data)
        assert index.format == fmt and len(index.blocks) == -(-len(records) // 8)
        assert archive.records(data) == records
        assert archive.ends(data) == ("g1", records[0], records[-1])
        path = tmp_path / str(fmt) / "g1.arena"
        archive.write_atomic(path, data)
        assert verify(path, ENGINE).ok
        assert record_of(path).id == "g1"
    assert archive.pack("g1", records) == archive.pack("g1", records, format=2)
    assert archive.FORMAT == 2


async def test_the_engine_archives_in_format_2(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await record_game(store, "g2", ENGINE, "fake", 3, seed=2)
    records = [d for _, d in await store.read("g2")]
    await archive_game(store, "g2", tmp_path, signer=None)
    data = (tmp_path / "g2.arena").read_bytes()
    assert archive.read_index(data)[0].format == 2
    assert archive.records(data) == records


def test_format_2_is_smaller_than_format_1_on_a_real_game() -> None:
    store = InMemoryEventStore()
    asyncio.run(record_game(store, "r1", RULES, "standard", 5, seed=3))
    records = [d for _, d in asyncio.run(store.read("r1"))]
    one, two = (archive.pack("r1", records, format=f) for f in (1, 2))
    assert archive.records(one) == archive.records(two) == records
    assert len(two) < len(one)


def test_damage_in_a_format_2_block_is_named_at_its_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = InMemoryEventStore()
    asyncio.run(record_game(store, "g1", ENGINE, "fake", 4, seed=8))
    records = [d for _, d in asyncio.run(store.read("g1"))]
    monkeypatch.setattr(archive, "BLOCK_SIZE", 8)
    data = archive.pack("g1", records)
    blocks = _block_offsets(data)
    assert len(blocks) >= 4
    for block, offset in blocks:
        where = f"entries {block.first}-{block.first + block.count - 1} damaged"
        # every byte of the block, one bit at a time in turn: the frame's header, its data and
        # its checksum all name the block (never a wrong entry read as right, never a crash)
        for at in range(block.size):
            bad = _flip(data, offset + at, 1 << (at % 8))
            unpacked = archive.unpack(bad)
            assert unpacked.damage is not None, (block.first, at)
            assert unpacked.damage.entry == block.first and where in str(unpacked.damage)
            assert unpacked.records == records[: block.first - 1]
        if block is blocks[-1][0] or block is blocks[0][0]:
            with pytest.raises(archive.ArchiveDamaged) as caught:
                archive.ends(_flip(data, offset + block.size // 2))
            assert caught.value.entry == block.first


def test_a_format_2_block_naming_a_huge_size_is_damage_not_an_allocation() -> None:
    """A zstd frame says its size before its data: a damaged size (here a terabyte) is
    reported at the block, not allocated (decompressing it raised MemoryError)."""
    body = zstandard.ZstdCompressor(level=1, write_checksum=True).compress(b"\x90")
    for size in (1 << 40, archive.MAX_BLOCK_BYTES + 1):
        # frame header descriptor: 8-byte content size, single segment, checksum
        huge = body[:4] + bytes([0b11100100]) + struct.pack("<Q", size) + body[6:]
        data = _with_block(huge, count=1)
        unpacked = archive.unpack(data)
        assert unpacked.damage is not None and unpacked.damage.entry == 1
        assert f"names a size of {size} bytes" in unpacked.damage.reason
    # a frame without its size (pack's always have one) is damage too
    unsized = zstandard.ZstdCompressor(level=1, write_content_size=False).compress(b"\x90")
    unpacked = archive.unpack(_with_block(unsized, count=1))
    assert unpacked.damage is not None and "names a size of -1 bytes" in unpacked.damage.reason


def _with_block(body: bytes, count: int, fmt: int = 2) -> bytes:
    return (
        archive.header(archive.Index(fmt, "g", count, [archive.Block(1, count, len(body))])) + body
    )


def test_bytes_after_a_format_2_frame_are_damage() -> None:
    body = zstandard.ZstdCompressor(level=1, write_checksum=True).compress(
        msgspec.msgpack.encode([b"x"])
    )
    assert archive.records(_with_block(body, count=1)) == [b"x"]
    unpacked = archive.unpack(_with_block(body + b"\x00", count=1))
    assert unpacked.damage is not None and unpacked.damage.entry == 1


def test_unknown_formats_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unsupported archive format 3"):
        archive.pack("g", [], format=3)
    unpacked = archive.unpack(_with_block(b"", count=0, fmt=3))
    assert unpacked.damage is not None and unpacked.damage.entry == 0
    assert unpacked.damage.reason == "unsupported archive format 3"


def test_blocks_are_split_to_stay_under_the_reader_s_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = [bytes([i]) * 300 for i in range(40)]
    monkeypatch.setattr(archive, "MAX_BLOCK_BYTES", 1000)
    data = archive.pack("g", records)
    index, _ = archive.read_index(data)
    assert len(index.blocks) > 1 and sum(b.count for b in index.blocks) == len(records)
    for b in index.blocks:  # each as many as fit in 1,000 bytes, after halving 256
        assert len(msgspec.msgpack.encode(records[b.first - 1 : b.first - 1 + b.count])) <= 1000
        assert b.count in (2, 3)
    assert archive.records(data) == records
    with pytest.raises(ValueError, match="entry 2 is over an archive block's 1000 bytes"):
        archive.pack("g", [b"x", b"y" * 1000])


@pytest.mark.parametrize("fmt", [1, 2])
async def test_arena_verify_and_the_replay_read_either_format(
    fmt: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real game, written in each format: `arena verify FILE` (the rules re-run it, the
    platform key checks it) and the replay service's archive reads."""
    var = tmp_path / "var"
    key_file, public = keep_in(var)
    signer = Signer.load(key_file)
    store = InMemoryEventStore()
    await record_game(store, "r1", RULES, "standard", 4, seed=5)
    records = [d for _, d in await store.read("r1")]
    folder = tmp_path / "archive"
    archive.write_atomic(folder / "r1.arena", archive.pack("r1", records, signer, format=fmt))
    run = asyncio.to_thread
    assert await run(arena, ["verify", str(folder / "r1.arena"), "--var", str(var)]) == 0
    assert f"signed by the platform key {public.key_id}" in capsys.readouterr().out
    rebuild_catalog(folder, public)
    replay = Replay(InMemoryEventStore(), archive_dir=folder)
    try:
        assert [g.id for g in await replay.list_games()] == ["r1"]
        page = await replay.get_events("r1", SPECTATOR)
        assert page.over and page.entries
        assert (await replay.verify("r1")).ok
    finally:
        await replay.close()
