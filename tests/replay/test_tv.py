"""TV's rule (services/replay/tv.py): among the live games, the one with the most seats alive;
among those, the closest on its public chart; a finished game is never featured; and the rule
reads what spectators were sent (a game held back by the delay counts as far as it was sent)."""

from __future__ import annotations

import msgspec

from services.eventlog import InMemoryEventStore
from services.play.watchschema import Tv
from services.readside.access import TablePolicy
from services.readside.chart import Charts
from services.readside.clock import ManualClock
from services.replay import Replay
from services.replay.tv import featured
from services.rules import api
from services.verify import record_game


async def _games(clock: ManualClock) -> tuple[InMemoryEventStore, dict[str, list[bytes]]]:
    """Logs of finished standard games, to cut into live ones."""
    full = InMemoryEventStore()
    logs = {}
    for seed in (3, 9, 17, 21):
        await record_game(full, f"s{seed}", api, "standard", 5, seed)
        logs[f"s{seed}"] = [d for _, d in await full.read(f"s{seed}")]
    return InMemoryEventStore(clock.now_ms), logs


def _before_death(log: list[bytes], deaths: int) -> int:
    """How many entries come before the log's death number ``deaths`` (0: the first)."""
    seen = -1
    for i, data in enumerate(log):
        if b"died" in data:
            seen += 1
            if seen == deaths:
                return i
    raise AssertionError("not so many deaths")


async def test_the_featured_game_has_the_most_seats_alive_then_the_closest_race() -> None:
    clock = ManualClock(10_000_000)
    live, logs = await _games(clock)
    # a: five alive; b: four alive (after its first death); c: five alive; d: finished
    cuts = {
        "a": ("s3", _before_death(logs["s3"], 0)),
        "b": ("s9", _before_death(logs["s9"], 1)),
        "c": ("s17", _before_death(logs["s17"], 0)),
        "d": ("s21", len(logs["s21"])),
    }
    for game, (src, n) in cuts.items():
        await live.append(game, 0, logs[src][:n])
    replay = Replay(live, clock=clock, live_ids=_ids(list(cuts)))
    got = await featured(replay, Charts())
    msgspec.convert(got, Tv)  # what the OpenAPI document says it sends
    rows = {r["game"]: r for r in got["candidates"]}
    assert set(rows) == {"a", "b", "c"}  # d is over
    assert rows["a"]["alive"] == rows["c"]["alive"] == 5 and rows["b"]["alive"] == 4
    closer = min(("a", "c"), key=lambda g: (rows[g]["lead"], -rows[g]["moves"], g))
    assert got["game"] == closer
    assert [r["game"] for r in got["candidates"]][-1] == "b"
    assert "most seats alive" in got["rule"]
    await replay.close()


async def test_tv_reads_what_spectators_were_sent() -> None:
    """With a spectator delay, a game whose entries are all still held back is not featured."""
    clock = ManualClock(10_000_000)
    live, logs = await _games(clock)
    await live.append("a", 0, logs["s3"][: _before_death(logs["s3"], 0)])
    policy = TablePolicy(spectator_delay_ms=60_000)
    replay = Replay(live, clock=clock, live_ids=_ids(["a"]), policy=lambda h: policy)
    assert (await featured(replay, Charts()))["game"] is None  # nothing sent yet
    clock.advance(61_000)
    assert (await featured(replay, Charts()))["game"] == "a"
    await replay.close()


def _ids(games: list[str]):  # type: ignore[no-untyped-def]
    async def ids() -> list[str]:
        return list(games)

    return ids
