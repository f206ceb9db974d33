"""SSE fan-out (services/replay/fanout.py): spectators of one game with the same grant share one
channel (one cursor, one chunk of bytes per update written to every socket), join at the entry
they hold, and one that falls behind carries on alone, missing nothing and repeating nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from services.bots.demo import play_live, sleeper
from services.eventlog import RedisEventStore
from services.replay import Replay, fanout
from services.replay.http import HttpServer

from .sse import SseClient, get_json, open_sse


@pytest.fixture
async def store(redis_client: aioredis.Redis, redis_namespace: str) -> RedisEventStore:
    return RedisEventStore(redis_client, redis_namespace)


@pytest.fixture
async def served(store: RedisEventStore) -> AsyncIterator[tuple[HttpServer, int]]:
    replay = Replay(store, seat_check=lambda g, s, t: t == f"seat-{s}")
    http = HttpServer(replay)
    port = await http.start()
    yield http, port
    await http.close()
    await replay.close()


async def read_all(sse: SseClient) -> tuple[list[int], bytes]:
    """Every entry's seq until ``event: end``, and the exact bytes received."""
    ids = []
    while (m := await asyncio.wait_for(sse.next(), 60)) is not None and m.event != "end":
        if m.id:
            ids.append(int(m.id))
    sse.close()
    return ids, bytes(sse.raw)


async def start_game(store: RedisEventStore, game: str, seed: int) -> asyncio.Task[None]:
    task = asyncio.create_task(play_live(store, game, players=5, seed=seed, pace=sleeper(2)))
    while not await store.head(game):
        await asyncio.sleep(0.01)
    return task


async def test_spectators_share_one_channel_and_get_the_same_bytes(
    store: RedisEventStore, served: tuple[HttpServer, int]
) -> None:
    http, port = served
    game = await start_game(store, "fan", 3)
    early = [await open_sse(port, "/api/games/fan/stream") for _ in range(12)]
    readers = [asyncio.create_task(read_all(s)) for s in early]
    await asyncio.sleep(0.3)
    # a spectator and a seat: two grants, two channels, however many watch
    seat = await open_sse(port, "/api/games/fan/stream?viewer=2", token="seat-2")
    seat_reader = asyncio.create_task(read_all(seat))
    await asyncio.sleep(0.1)
    assert sorted(k[1:] for k in http.fanout.channels if k[0] == "fan") == [(-1, 0), (2, 0)]
    late = await open_sse(port, "/api/games/fan/stream")  # joins mid-game: caught up first
    got = await asyncio.gather(*readers, read_all(late))
    seat_ids, seat_raw = await seat_reader
    await game
    _, page = await get_json(port, "/api/games/fan/events")
    everything = [e["seq"] for e in page["entries"]]
    for ids, _ in got:
        assert ids == everything  # every entry once, in order, early or late
    bodies = {raw.split(b"\r\n\r\n", 1)[1] for _, raw in got[:-1]}
    assert len(bodies) == 1  # the same bytes on every early socket
    _, mine = await get_json(port, "/api/games/fan/events?viewer=2", "seat-2")
    assert seat_ids == [e["seq"] for e in mine["entries"]] != everything  # the seat's own view
    assert seat_raw.split(b"\r\n\r\n", 1)[1] not in bodies
    await asyncio.sleep(0.1)
    assert not any(k[0] == "fan" for k in http.fanout.channels)  # ended with the game


async def test_a_spectator_that_falls_behind_carries_on_alone(
    store: RedisEventStore, served: tuple[HttpServer, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, port = served
    # every write counts as falling behind (a kernel buffer on localhost takes megabytes before
    # the transport keeps any): the first write hands the subscriber to its own stream
    monkeypatch.setattr(fanout, "SLOW_BYTES", -1)
    reasons: list[str] = []
    leave = fanout.Subscriber.leave

    def noted(sub: fanout.Subscriber, reason: str) -> None:
        reasons.append(reason)
        leave(sub, reason)

    monkeypatch.setattr(fanout.Subscriber, "leave", noted)
    game = await start_game(store, "slow", 4)
    fast = asyncio.create_task(read_all(await open_sse(port, "/api/games/slow/stream")))
    await asyncio.sleep(0.3)
    slow = await open_sse(port, "/api/games/slow/stream")
    fast_ids, _ = await fast
    slow_ids, _ = await read_all(slow)
    await game
    _, page = await get_json(port, "/api/games/slow/events")
    everything = [e["seq"] for e in page["entries"]]
    assert fast_ids == everything and slow_ids == everything
    assert "slow" in reasons
