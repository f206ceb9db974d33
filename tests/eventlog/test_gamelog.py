"""Entries, hash chain, payloads, the seed commitment and loading from a snapshot."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.eventlog import InMemoryEventStore, VersionConflict
from services.eventlog import entry as entry_mod
from services.eventlog.entry import (
    GENESIS,
    Entry,
    UnsupportedSchema,
    decode_entry,
    encode_entry,
    first_break,
    seal,
    upgrade,
)
from services.eventlog.gamelog import ChainBroken, GameLog, snapshot_due
from services.eventlog.records import (
    AnswerRecord,
    Header,
    Seat,
    SeedReveal,
    commit_seed,
    decode_payload,
    encode_payload,
    reveal_matches,
)
from services.verify import record_game

from . import fake_engine


def header(game: str = "g1", seed: int = 7, salt: bytes = b"s" * 16) -> Header:
    return Header(
        game_id=game,
        ruleset="standard",
        players=2,
        rules_version="fake-1",
        seats=[Seat("alice"), Seat("bot1", bot=True)],
        seed_commitment=commit_seed(seed, salt),
        options={"b": 1, "a": [1, 2]},
    )


@given(st.lists(st.tuples(st.sampled_from(["event", "answer"]), st.binary(max_size=40))))
def test_sealed_entries_chain_and_round_trip(items: list[tuple[str, bytes]]) -> None:
    entries = seal(GENESIS, 1, items)
    decoded = [decode_entry(encode_entry(e)) for e in entries]
    assert decoded == entries
    assert first_break(GENESIS, 1, decoded) is None
    if entries:
        # Continuing from the last hash chains exactly like sealing everything at once.
        more = seal(entries[-1].hash, len(entries) + 1, [("event", b"x")])
        assert more == seal(GENESIS, 1, [*items, ("event", b"x")])[-1:]


@given(
    st.lists(st.tuples(st.sampled_from(["event", "answer", "control"]), st.binary(max_size=40))),
    st.integers(1, 2**40),
)
def test_sealed_records_are_the_sealed_entries_encoded(
    items: list[tuple[str, bytes]], first: int
) -> None:
    """The engine's fast path (`seal_records`) stores exactly the bytes `seal` and
    `encode_entry` make, and hands on the same head hash."""
    prev = bytes(range(32))
    records, head = entry_mod.seal_records(prev, first, items)
    entries = seal(prev, first, items)
    assert records == [encode_entry(e) for e in entries]
    assert head == (entries[-1].hash if entries else prev)


def test_chain_names_the_tampered_entry() -> None:
    entries = seal(GENESIS, 1, [("event", bytes([i])) for i in range(5)])
    bad = list(entries)
    bad[3] = Entry(1, "event", b"\xff", entries[3].hash)
    assert first_break(GENESIS, 1, bad) == 3
    swapped = [entries[0], entries[2], entries[1], *entries[3:]]
    assert first_break(GENESIS, 1, swapped) == 1
    # a version that does not fit the hashed two bytes, or a kind over 255 bytes, breaks the
    # chain there (not a struct.error out of the load)
    for odd in (Entry(70_000, "event", b"\x03", entries[3].hash), Entry(1, "k" * 300, b"", b"")):
        assert first_break(GENESIS, 1, [*entries[:3], odd, *entries[4:]]) == 3


def test_payloads_are_canonical_and_round_trip() -> None:
    h = header()
    assert decode_payload(encode_payload(h), Header) == h
    reordered = Header(**{**msgspec.structs.asdict(h), "options": {"a": [1, 2], "b": 1}})
    assert encode_payload(reordered) == encode_payload(h)
    a = AnswerRecord(decision=4, seat=1, picks=["card:3"])
    assert decode_payload(encode_payload(a), AnswerRecord) == a


def test_seed_commitment() -> None:
    h = header(seed=7, salt=b"s" * 16)
    assert reveal_matches(h, SeedReveal(seed=7, salt=b"s" * 16))
    assert not reveal_matches(h, SeedReveal(seed=8, salt=b"s" * 16))
    assert not reveal_matches(h, SeedReveal(seed=7, salt=b"t" * 16))
    assert not reveal_matches(h, SeedReveal(seed=-1, salt=b"s" * 16))
    with pytest.raises(ValueError):
        commit_seed(2**64, b"")


def test_upgrade_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry of an older schema is upgraded on read; its stored hash still verifies."""
    old = Entry(0, "evt", b"old", entry_mod.chain_hash(GENESIS, 1, 0, "evt", b"old"))
    with pytest.raises(UnsupportedSchema):
        upgrade(old)
    monkeypatch.setitem(entry_mod.UPGRADERS, 0, lambda kind, p: ("event", p + b"!"))
    new = upgrade(old)
    assert (new.v, new.kind, new.payload, new.hash) == (1, "event", b"old!", old.hash)
    assert first_break(GENESIS, 1, [old]) is None
    with pytest.raises(UnsupportedSchema):
        upgrade(Entry(99, "event", b"", b""))


async def test_gamelog_writes_a_chain_and_stale_writers_conflict() -> None:
    store = InMemoryEventStore()
    log = await GameLog.start(store, header())
    await log.record_events([b"e1", b"e2"])
    stale = (await GameLog.load(store, "g1")).log
    await log.record_answer(AnswerRecord(1, 0, ["card:1"]), [b"e3"])
    with pytest.raises(VersionConflict):
        await stale.record_events([b"fork"])
    with pytest.raises(VersionConflict):
        await GameLog.start(store, header())
    loaded = await GameLog.load(store, "g1")
    assert loaded.log.version == 5 and loaded.log.head_hash == log.head_hash
    assert [e.kind for e in loaded.tail] == ["header", "event", "event", "answer", "event"]


async def test_load_is_snapshot_plus_tail() -> None:
    store = InMemoryEventStore()
    log = await record_game(store, "g1", fake_engine, "fake", 3, seed=11, snapshot_every=5)
    snap = await store.load_snapshot("g1")
    assert snap is not None and 0 < snap.version < log.version
    loaded = await GameLog.load(store, "g1")
    assert len(loaded.tail) == log.version - snap.version
    assert loaded.log.head_hash == log.head_hash
    # The snapshot is the engine state right after the answer batch at its version.
    full = [decode_entry(d) for _, d in await store.read("g1")]
    assert full[snap.version - 1].hash == snap.chain_hash
    assert fake_engine.restore(snap.state).turn > 0


async def test_load_detects_a_broken_chain() -> None:
    store = InMemoryEventStore()
    await GameLog.start(store, header())
    forged = seal(b"\x01" * 32, 2, [("event", b"forged")])
    await store.append("g1", 1, [encode_entry(e) for e in forged])
    with pytest.raises(ChainBroken) as info:
        await GameLog.load(store, "g1")
    assert info.value.seq == 2


def test_snapshot_due() -> None:
    assert snapshot_due(9, 10, 10) and snapshot_due(8, 12, 10)
    assert not snapshot_due(10, 19, 10) and not snapshot_due(1, 100, 0)
