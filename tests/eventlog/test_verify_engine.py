"""Verify and load real games through the rules engine (`services.rules.api`)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import redis.asyncio as aioredis

from services.eventlog import InMemoryEventStore, RedisEventStore, archive
from services.eventlog.entry import ANSWER, EVENT, decode_entry
from services.eventlog.gamelog import GameLog
from services.eventlog.records import AnswerRecord, decode_payload, encode_payload
from services.rules import api
from services.verify import record_game, verify

from .test_verify import reseal


async def real_game(seed: int, players: int = 5) -> list[bytes]:
    store = InMemoryEventStore()
    await record_game(store, f"real{seed}", api, "standard", players, seed)  # type: ignore[arg-type]
    return [d for _, d in await store.read(f"real{seed}")]


async def test_real_games_verify_from_memory_redis_and_archive(
    redis_client: aioredis.Redis, redis_namespace: str, tmp_path: Path
) -> None:
    store = RedisEventStore(redis_client, redis_namespace)
    for seed, players in ((1, 5), (2, 4), (3, 8)):
        await record_game(store, f"g{seed}", api, "standard", players, seed)  # type: ignore[arg-type]
        records = [d for _, d in await store.read(f"g{seed}")]
        report = verify(records)
        assert report.ok, report.summary()
        path = tmp_path / f"g{seed}.arena"
        path.write_bytes(archive.pack(f"g{seed}", records))
        assert verify(path).ok


async def test_edited_answer_diverges_in_the_real_engine() -> None:
    records = await real_game(7)
    entries = [decode_entry(r) for r in records]
    i = next(
        i
        for i, e in enumerate(entries)
        if e.kind == ANSWER and decode_payload(e.payload, AnswerRecord).picks
    )
    a = decode_payload(entries[i].payload, AnswerRecord)
    forged = AnswerRecord(a.decision, a.seat, [])  # a decline, or an illegal empty answer
    report = verify(reseal(records, i, ANSWER, encode_payload(forged)))
    assert report.chain_ok and report.seed_ok and not report.ok
    assert report.divergence is not None and report.divergence.entry >= i + 1
    assert f"entry {report.divergence.entry}" in report.summary()


async def test_edited_event_shows_expected_and_actual() -> None:
    records = await real_game(8)
    entries = [decode_entry(r) for r in records]
    i = next(i for i, e in enumerate(entries) if e.kind == EVENT and i > 20)
    ev = api.decode_event(entries[i].payload)
    fields = msgspec.structs.asdict(ev)
    key = next(k for k, v in fields.items() if isinstance(v, int) and not isinstance(v, bool))
    forged_event = msgspec.structs.replace(ev, **{key: fields[key] + 1})
    report = verify(reseal(records, i, EVENT, api.encode_event(forged_event)))
    d = report.divergence
    assert d is not None and d.entry == i + 1 and d.kind == EVENT
    assert d.expected == repr(ev) and d.actual == repr(forged_event)


async def test_snapshot_plus_tail_rebuilds_the_same_state() -> None:
    """What an engine worker does on failover: restore the snapshot, re-apply later answers."""
    store = InMemoryEventStore()
    await record_game(store, "long", api, "standard", 5, 4, snapshot_every=200)  # type: ignore[arg-type]
    loaded = await GameLog.load(store, "long")
    assert loaded.snapshot is not None and loaded.snapshot.version >= 200
    game = api.restore(loaded.snapshot.state)
    produced: list[bytes] = []
    for e in loaded.tail:
        if e.kind == ANSWER:
            a = decode_payload(e.payload, AnswerRecord)
            events = api.submit(game, api.Answer(decision=a.decision, seat=a.seat, picks=a.picks))
            produced += [api.encode_event(x) for x in events]
    assert produced == [e.payload for e in loaded.tail if e.kind == EVENT]
    assert api.is_over(game)
