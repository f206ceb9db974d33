"""The one-pass chain check (`entry.chained`, under `check_chain`) accepts exactly what the
entry-by-entry check accepts, so every damaged log still fails with the same report; and the
archive writer's block size is its own choice: files of 64-entry blocks read as before."""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.eventlog import InMemoryEventStore, archive, catalog
from services.eventlog import entry as entry_mod
from services.eventlog.catalog import NotArchivable, archive_game, record_of
from services.eventlog.checks import VerifyReport, _check_each, check_chain
from services.eventlog.entry import (
    GENESIS,
    chain_hash,
    chained,
    decode_entry,
    encode_entry,
    framing_crc,
    seal,
)
from services.eventlog.gamelog import GameLog
from services.verify import Engine, record_game, verify

from . import fake_engine

ENGINE: Engine = fake_engine  # type: ignore[assignment]

ITEMS = st.lists(
    st.tuples(st.sampled_from(["event", "answer", "control", ""]), st.binary(max_size=40)),
    max_size=30,
)


def _sealed(items: list[tuple[str, bytes]]) -> list[bytes]:
    return [encode_entry(e) for e in seal(GENESIS, 1, items)]


def _both(records: list[bytes]) -> tuple[VerifyReport, VerifyReport, list[object] | None]:
    """check_chain's report, the careful loop's report, and what check_chain returned."""
    fast, slow = VerifyReport(ok=False), VerifyReport(ok=False)
    got = check_chain(records, fast)
    _check_each(records, slow)
    return fast, slow, got  # type: ignore[return-value]


@given(ITEMS)
def test_a_whole_log_takes_the_one_pass_and_gives_the_same_entries(
    items: list[tuple[str, bytes]],
) -> None:
    records = _sealed(items)
    entries = chained(records)
    assert entries == [decode_entry(r) for r in records]
    report = VerifyReport(ok=False)
    assert check_chain(records, report) == entries and report.chain_ok


def _mutations(records: list[bytes]) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for i in range(len(records)):
        for at in range(0, len(records[i]), 5):
            bad = bytearray(records[i])
            bad[at] ^= 0x20
            out[f"byte {at} of entry {i + 1} flipped"] = [
                *records[:i],
                bytes(bad),
                *records[i + 1 :],
            ]
    out["entries 2 and 3 swapped"] = [records[0], records[2], records[1], *records[3:]]
    out["entry 3 dropped"] = records[:2] + records[3:]
    out["entry 1 dropped"] = records[1:]
    # The same bytes, cut elsewhere: each record must decode on its own.
    out["boundary moved"] = [
        records[0],
        records[1] + records[2][:1],
        records[2][1:],
        *records[3:],
    ]
    e = decode_entry(records[1])
    for name, v, kind in (
        ("a newer schema", 2, e.kind),
        ("v past a u16", 70000, e.kind),
        ("a negative v", -1, e.kind),
        ("a 300-byte kind", 1, "k" * 300),
    ):
        forged = encode_entry(entry_mod.Entry(v, kind, e.payload, e.hash))
        out[name] = [records[0], forged, *records[2:]]
    # Kind "" hashed as if it had no version and length bytes (seq, then the payload): a
    # chain over another input than the one the format defines must not pass.
    first = decode_entry(records[0])
    at_2 = hashlib.sha256(first.hash + (2).to_bytes(8, "big") + b"p").digest()
    out["kind '' hashed without its prefix at 2"] = [
        records[0],
        encode_entry(entry_mod.Entry(1, "", b"p", at_2)),
        *records[2:],
    ]
    at_1 = hashlib.sha256(GENESIS + (1).to_bytes(8, "big") + b"p").digest()
    rest = seal(at_1, 2, [("event", b"x"), ("event", b"y")])  # the rest chained onto it
    out["kind '' hashed without its prefix at 1"] = [
        encode_entry(entry_mod.Entry(1, "", b"p", at_1)),
        *map(encode_entry, rest),
    ]
    return out


def test_every_damaged_log_fails_with_the_careful_loops_report() -> None:
    records = _sealed([("header", b"h")] + [("event", bytes([i]) * 9) for i in range(6)])
    for name, bad in _mutations(records).items():
        assert chained(bad) is None, name
        fast, slow, got = _both(bad)
        assert got is None and not fast.chain_ok, name
        assert fast.divergence is not None and fast.divergence == slow.divergence, name


def test_an_older_schema_is_upgraded_by_the_careful_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    old = entry_mod.Entry(0, "evt", b"old", chain_hash(GENESIS, 1, 0, "evt", b"old"))
    monkeypatch.setitem(entry_mod.UPGRADERS, 0, lambda kind, p: ("event", p + b"!"))
    records = [encode_entry(old)]
    assert chained(records) is None
    report = VerifyReport(ok=False)
    entries = check_chain(records, report)
    assert report.chain_ok and entries is not None
    assert (entries[0].v, entries[0].kind, entries[0].payload) == (1, "event", b"old!")


async def test_a_damaged_live_log_is_never_archived_nor_dropped(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await record_game(store, "g1", ENGINE, "fake", 3, seed=4)
    records = [d for _, d in await store.read("g1")]
    damaged = InMemoryEventStore()
    e = decode_entry(records[5])
    bad = encode_entry(msgspec.structs.replace(e, payload=e.payload[:-1] + b"\xff"))
    for seq, data in enumerate([*records[:5], bad, *records[6:]]):
        await damaged.append("g1", seq, [data])
    with pytest.raises(NotArchivable, match="entry=6, .*hash chain broken"):
        await archive_game(damaged, "g1", tmp_path)
    assert await damaged.head("g1") == len(records)
    assert not (tmp_path / "g1.arena").exists()


async def test_the_writers_crc_spares_the_chain_check_and_any_change_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log archived with the CRC its writer kept of the records it sealed (the engine that
    played the game) is written without a chain check, to the same file; a record changed
    since, or a log taken up at a later version, is chain-checked as before."""
    store = InMemoryEventStore()
    log = await record_game(store, "g1", ENGINE, "fake", 3, seed=4)
    records = [d for _, d in await store.read("g1")]
    assert log.sealed_crc == framing_crc(records)
    assert (await GameLog.load(store, "g1")).log.sealed_crc is None  # (taken up at a version)
    checked: list[int] = []
    real = catalog.check_chain

    def counting(r: list[bytes], report: VerifyReport) -> list[entry_mod.Entry] | None:
        checked.append(len(r))
        return real(r, report)

    monkeypatch.setattr(catalog, "check_chain", counting)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    crc = log.sealed_crc
    await archive_game(store, "g1", tmp_path / "a", delete=False, signer=None, sealed_crc=crc)
    assert checked == []
    await archive_game(store, "g1", tmp_path / "b", delete=False, signer=None)
    assert checked == [len(records)]
    assert (tmp_path / "a" / "g1.arena").read_bytes() == (tmp_path / "b" / "g1.arena").read_bytes()
    damaged = InMemoryEventStore()
    e = decode_entry(records[5])
    bad = encode_entry(msgspec.structs.replace(e, payload=e.payload[:-1] + b"\xff"))
    await damaged.append("g1", 0, [*records[:5], bad, *records[6:]])
    with pytest.raises(NotArchivable, match="entry=6, .*hash chain broken"):
        await archive_game(damaged, "g1", tmp_path, sealed_crc=crc)
    assert not (tmp_path / "g1.arena").exists()


@given(st.lists(st.binary(max_size=300), max_size=40), st.integers(0, 40))
def test_framing_crc_goes_on_over_batches_and_sees_the_boundaries(
    records: list[bytes], cut: int
) -> None:
    assert framing_crc(records[cut:], framing_crc(records[:cut])) == framing_crc(records)
    joined = b"".join(records)
    if len(joined) > 1:  # the same bytes split otherwise
        assert framing_crc([joined[:1], joined[1:]]) != framing_crc([joined])


def test_framing_crc_of_long_batches() -> None:
    """Batches past msgpack's short array headers (16 and 65,536 records) go on the same."""
    records = [bytes([i % 256]) * (i % 7) for i in range(70_000)]
    assert framing_crc(records) == framing_crc(records[20:], framing_crc(records[:20]))
    assert framing_crc(records) == framing_crc(records[66_000:], framing_crc(records[:66_000]))


async def test_files_of_smaller_blocks_read_verify_and_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files written before the block size went to 256 (64 entries a block; 8 as well, so
    that this short game spans several) read, verify and list as the new ones do."""
    store = InMemoryEventStore()
    await record_game(store, "g1", ENGINE, "fake", 4, seed=8)
    records = [d for _, d in await store.read("g1")]
    files = {"new": archive.pack("g1", records)}
    assert archive.BLOCK_SIZE == 256
    for size in (64, 8):
        monkeypatch.setattr(archive, "BLOCK_SIZE", size)
        files[f"blocks of {size}"] = archive.pack("g1", records)
    monkeypatch.undo()
    assert len(archive.read_index(files["blocks of 8"])[0].blocks) == -(-len(records) // 8) > 1
    for name, data in files.items():
        assert archive.records(data) == records, name
        path = tmp_path / f"{name}.arena"
        path.write_bytes(data)
        assert verify(path, ENGINE).ok, name
        assert record_of(path).id == "g1"


def test_a_record_that_does_not_decode_is_named() -> None:
    records = _sealed([("header", b"h"), ("event", b"e")])
    fast, slow, got = _both([records[0], b"\xc1"])
    assert got is None and fast.divergence == slow.divergence
    assert fast.divergence is not None and fast.divergence.entry == 2
    assert "does not decode" in fast.divergence.reason
    with pytest.raises(msgspec.MsgspecError):
        decode_entry(b"\xc1")
