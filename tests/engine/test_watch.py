"""The engine's tail of a game log for WatchGame (services/engine/views.py `Watch.tail`) when the
log is archived and dropped before the tail read its end: the rest comes from the archive file,
up to the seed reveal; without an archive folder the tail ends where the log did."""

from __future__ import annotations

from pathlib import Path

from services.engine.views import Watch
from services.eventlog import InMemoryEventStore, archive_game
from services.eventlog.entry import SEED_REVEAL
from services.readside.clock import SystemClock
from services.replay.demo import play_live
from services.rules.api import SPECTATOR


async def _tail(watch: Watch, after: int) -> list[tuple[int, int]]:
    return [(seq, entry.kind) async for seq, entry in watch.tail("w1", SPECTATOR, after)]


async def test_the_tail_finishes_from_the_archive_once_the_log_is_gone(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await play_live(store, "w1", players=5, seed=6)
    head = await store.head("w1")
    await archive_game(store, "w1", tmp_path)  # the engine's finish: file written, log dropped
    assert await store.head("w1") == 0
    half = head // 2
    rest = await _tail(Watch(store, SystemClock(), 0, tmp_path), half)
    assert [seq for seq, _ in rest] == list(range(half + 1, head + 1))
    assert rest[-1][1] == SEED_REVEAL
    assert await _tail(Watch(store, SystemClock()), half) == []  # no archive folder: ends
