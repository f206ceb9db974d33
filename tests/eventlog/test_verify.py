"""Archive, export and verify with a stand-in engine: clean games pass, tampering is named."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import redis.asyncio as aioredis

from services.eventlog import InMemoryEventStore, RedisEventStore, archive
from services.eventlog.catalog import (
    CATALOG,
    NotArchivable,
    archive_game,
    load_catalog,
    rebuild_catalog,
)
from services.eventlog.entry import ANSWER, SEED_REVEAL, decode_entry, encode_entry, seal
from services.eventlog.records import AnswerRecord, SeedReveal, decode_payload, encode_payload
from services.verify import Engine, record_game, verify
from services.verify.commands import export_game, verify_game

from . import fake_engine

ENGINE: Engine = fake_engine  # type: ignore[assignment]


async def recorded(game: str = "g1", seed: int = 5, players: int = 3) -> list[bytes]:
    store = InMemoryEventStore()
    await record_game(store, game, ENGINE, "fake", players, seed)
    return [d for _, d in await store.read(game)]


def reseal(records: list[bytes], index: int, kind: str, payload: bytes) -> list[bytes]:
    """Replace entry `index` (0-based) and re-chain everything after it, as a forger would."""
    entries = [decode_entry(r) for r in records]
    items = [(e.kind, e.payload) for e in entries]
    items[index] = (kind, payload)
    prev = entries[index - 1].hash
    return records[:index] + [encode_entry(e) for e in seal(prev, index + 1, items[index:])]


async def test_recorded_game_verifies() -> None:
    records = await recorded()
    report = verify(records, ENGINE)
    assert report.ok, report.summary()
    assert report.chain_ok and report.seed_ok and report.replay_ok
    assert report.game_id == "g1" and report.entries == len(records)
    reveal = decode_payload(decode_entry(records[-1]).payload, SeedReveal)
    assert reveal.seed == 5 and len(reveal.winners) == 1


async def test_archive_round_trip_and_single_byte_flips(tmp_path: Path) -> None:
    records = await recorded(players=4)
    data = archive.pack("g1", records)
    assert len(data) < sum(map(len, records))  # it is compressed
    path = tmp_path / "g1.arena"
    path.write_bytes(data)
    assert verify(path, ENGINE).ok
    # Every flip anywhere in the file fails verification (stride keeps the test quick).
    for offset in range(0, len(data), 7):
        bad = bytearray(data)
        bad[offset] ^= 0x01
        report = verify(bytes(bad), ENGINE)
        assert not report.ok, offset
        assert report.divergence is not None


async def test_flipped_byte_in_a_block_names_the_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "BLOCK_SIZE", 8)
    records = await recorded(players=4)
    data = archive.pack("g1", records)
    index, offset = archive.read_index(data)
    assert len(index.blocks) >= 2
    second = index.blocks[1]
    at = offset + index.blocks[0].size + second.size // 2
    bad = bytearray(data)
    bad[at] ^= 0x40
    report = verify(bytes(bad), ENGINE)
    assert report.divergence is not None and report.divergence.entry == second.first
    assert f"entries {second.first}-" in report.divergence.reason


async def test_edited_entry_inside_a_recompressed_archive_is_named() -> None:
    records = await recorded()
    target = next(i for i, r in enumerate(records) if decode_entry(r).kind == "event")
    e = decode_entry(records[target])
    forged = list(records)
    forged[target] = encode_entry(msgspec.structs.replace(e, payload=e.payload[:-1] + b"\x00"))
    report = verify(archive.pack("g1", forged), ENGINE)
    assert not report.ok and report.divergence is not None
    assert report.divergence.entry == target + 1
    assert report.divergence.reason == "hash chain broken"


async def test_edited_answer_reports_the_divergence() -> None:
    """A forger changes an answer and re-chains the log: the chain holds, the replay does not."""
    records = await recorded()
    answers = [i for i, r in enumerate(records) if decode_entry(r).kind == ANSWER]
    i = answers[2]
    a = decode_payload(decode_entry(records[i]).payload, AnswerRecord)
    decision = fake_engine.Decision(a.decision, a.seat, "play", [])
    other = next(
        p
        for p in ("card:1", "card:2", "card:3", "card:4", "card:5", "card:6", "card:7", "card:8")
        if p not in a.picks
    )
    assert decision.id == a.decision
    forged = reseal(records, i, ANSWER, encode_payload(AnswerRecord(a.decision, a.seat, [other])))
    report = verify(forged, ENGINE)
    assert report.chain_ok and report.seed_ok and not report.ok
    d = report.divergence
    assert d is not None and d.entry >= i + 1
    if d.entry == i + 1:
        assert "rejects the logged answer" in d.reason
    else:
        assert d.expected and d.actual and d.expected != d.actual


async def test_a_different_seed_does_not_open_the_commitment() -> None:
    records = await recorded()
    last = decode_payload(decode_entry(records[-1]).payload, SeedReveal)
    fake = SeedReveal(seed=last.seed + 1, salt=last.salt, winners=last.winners)
    report = verify(reseal(records, len(records) - 1, SEED_REVEAL, encode_payload(fake)), ENGINE)
    assert report.chain_ok and not report.seed_ok
    assert report.divergence is not None and report.divergence.entry == len(records)


async def test_unfinished_game_is_not_ok() -> None:
    records = (await recorded())[:-1]
    report = verify(records, ENGINE)
    assert report.chain_ok and not report.ok
    assert "not finished" in report.summary()


async def test_flipped_byte_in_a_redis_entry_is_named(
    redis_client: aioredis.Redis, redis_namespace: str, tmp_path: Path
) -> None:
    store = RedisEventStore(redis_client, redis_namespace)
    await record_game(store, "g1", ENGINE, "fake", 3, seed=9)
    entries = [d for _, d in await store.read("g1")]
    raw = bytearray(entries[6])
    raw[-1] ^= 0x01  # the last byte of entry 7's hash
    entries[6] = bytes(raw)
    # XADD refuses ids at or below the stream's top, so a tamperer rewrites the whole stream.
    await redis_client.delete(store.log_key("g1"))
    for seq, data in enumerate(entries, 1):
        await redis_client.xadd(store.log_key("g1"), {"e": data}, id=f"{seq}-0")
    live = await verify_game(store, "g1", ENGINE)
    assert live.divergence is not None and live.divergence.entry == 7
    out = tmp_path / "g1.arena"
    assert await export_game(store, "g1", out) == len(entries)
    report = verify(out, ENGINE)
    assert not report.ok and report.divergence is not None
    assert report.divergence.entry == 7 and report.divergence.reason == "hash chain broken"


async def test_archive_folder_and_catalog_rebuild(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    for n, game in enumerate(["ga", "gb", "gc"]):
        await record_game(store, game, ENGINE, "fake", 2 + n, seed=n)
    await record_game(store, "live", ENGINE, "fake", 2, seed=3)
    await store.append("live", await store.head("live"), [])
    # An unfinished game cannot be archived and stays live.
    unfinished = InMemoryEventStore()
    for seq, data in (await store.read("live"))[:-1]:
        await unfinished.append("live", seq - 1, [data])
    with pytest.raises(NotArchivable):
        await archive_game(unfinished, "live", tmp_path)
    assert await unfinished.head("live") > 0

    recs = [await archive_game(store, g, tmp_path) for g in ("ga", "gb", "gc")]
    assert await store.head("ga") == 0  # live copy dropped once archived
    assert [r.id for r in load_catalog(tmp_path)] == [r.id for r in recs]
    assert recs[1].players == ["bot0", "bot1", "bot2"] and recs[1].ruleset == "fake"
    assert all(r.end >= r.start > 0 and len(r.winners) == 1 for r in recs)
    for r in recs:
        assert verify(tmp_path / r.file, ENGINE).ok

    (tmp_path / CATALOG).unlink()
    (tmp_path / "junk.arena").write_bytes(b"not an archive")
    rebuilt, skipped = rebuild_catalog(tmp_path)
    assert sorted(r.id for r in rebuilt) == ["ga", "gb", "gc"]
    assert list(skipped) == ["junk.arena"]
    assert sorted(r.id for r in load_catalog(tmp_path)) == ["ga", "gb", "gc"]
