"""GameService's tail of a game log (services/readside/watch.py `Watch.tail`) when the
log is archived and dropped before the tail read its end: the rest comes from the archive file,
up to the seed reveal; without an archive folder the tail ends where the log did."""

from __future__ import annotations

from pathlib import Path

from services.bots.demo import play_live
from services.eventlog import InMemoryEventStore, archive_game
from services.readside import schema
from services.readside.clock import SystemClock
from services.readside.positions import positions_of
from services.readside.watch import Watch
from services.rules.api import SPECTATOR


async def _tail(watch: Watch, after: int, positions: object) -> list[tuple[int, str]]:
    return [
        (p, type(schema.decode(e)).__name__)
        async for p, e in watch.tail("w1", SPECTATOR, after, 0, True, positions, None)  # type: ignore[arg-type]
    ]


async def test_the_tail_finishes_from_the_archive_once_the_log_is_gone(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await play_live(store, "w1", players=5, seed=6)
    head = await store.head("w1")
    at = positions_of(await store.read("w1"))  # kept by the engine beside the hot game
    await archive_game(store, "w1", tmp_path)  # the engine's finish: file written, log dropped
    assert await store.head("w1") == 0
    half = head // 2  # a spectator's position (the game's answers are withheld from it)
    rest = await _tail(Watch(store, SystemClock(), archive_dir=tmp_path), half, at)
    last = at.position(SPECTATOR, head)
    assert [p for p, _ in rest] == list(range(half + 1, last + 1))
    assert rest[-1][1] == "RevealEntry"
    assert await _tail(Watch(store, SystemClock()), half, at) == []  # no archive folder: ends
