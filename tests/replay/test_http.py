"""HTTP and SSE against a real Redis: redaction of the bytes sent, delay, Last-Event-ID resume."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from services.bots.demo import play_live, sleeper
from services.eventlog import RedisEventStore
from services.readside.clock import ServerClock
from services.replay import Replay, TablePolicy
from services.replay.http import HttpServer
from services.rules.api import SPECTATOR

from .leaks import Truth, n_cards
from .sse import get, get_json, open_sse


@pytest.fixture
async def store(redis_client: aioredis.Redis, redis_namespace: str) -> RedisEventStore:
    return RedisEventStore(redis_client, redis_namespace)


@pytest.fixture
async def server(store: RedisEventStore) -> AsyncIterator[tuple[Replay, int]]:
    replay = Replay(store, seat_check=lambda g, s, t: t == f"seat-{s}")
    http = HttpServer(replay)
    port = await http.start()
    yield replay, port
    await http.close()
    await replay.close()


async def all_records(store: RedisEventStore, game: str) -> list[bytes]:
    return [d for _, d in await store.read(game)]


async def test_sse_and_json_of_a_live_game_hold_no_hidden_card_or_role(
    store: RedisEventStore, server: tuple[Replay, int]
) -> None:
    _, port = server
    game = asyncio.create_task(play_live(store, "live1", players=6, seed=21, pace=sleeper(1)))
    while not await store.head("live1"):
        await asyncio.sleep(0.01)
    sse = await open_sse(port, "/api/games/live1/stream")
    assert sse.status == 200
    messages = []
    pages: list[bytes] = []
    while (m := await asyncio.wait_for(sse.next(), 30)) is not None:
        messages.append(m)
        if len(messages) % 50 == 0:  # JSON reads while the game is live
            status, body = await get(port, f"/api/games/live1/events?from={m.id}")
            assert status == 200
            pages.append(body)
            assert (await get(port, "/api/games/live1/events?viewer=god"))[0] == 403
    await game
    assert messages[-1].event == "end"
    recs = await all_records(store, "live1")
    truth = Truth(recs, n_cards(recs))
    leaks = [x for m in messages[:-1] for x in truth.leaks(int(m.id), m.data, SPECTATOR)]
    for body in pages:
        for e in json.loads(body)["entries"]:
            data = json.dumps(e, separators=(",", ":"), ensure_ascii=False).encode()
            leaks += truth.leaks(e["seq"], data, SPECTATOR)
    assert not leaks, leaks[:5]
    # the SSE id is the sequence number, and the data is the same envelope the JSON API serves
    assert all(json.loads(m.data)["seq"] == int(m.id) for m in messages[:-1])
    assert b'"picks"' not in bytes(sse.raw)
    sse.close()


async def test_seat_view_needs_its_token_and_god_opens_at_the_end(
    store: RedisEventStore, server: tuple[Replay, int]
) -> None:
    _, port = server
    gate = asyncio.Event()

    async def pace(version: int) -> None:
        if version > 200:
            await gate.wait()

    game = asyncio.create_task(play_live(store, "tok", players=5, seed=3, pace=pace))
    while await store.head("tok") < 200:
        await asyncio.sleep(0.01)
    assert (await get(port, "/api/games/tok/events?viewer=2"))[0] == 403
    assert (await get(port, "/api/games/tok/events?viewer=2", "seat-1"))[0] == 403
    assert (await get(port, "/api/games/tok/stream?viewer=god"))[0] == 403
    # a seat token in the URL is refused (URLs end up in logs), the right one included
    for path in ("events", "stream"):
        status, body = await get_json(port, f"/api/games/tok/{path}?viewer=2&token=seat-2")
        assert status == 400 and "Authorization" in body["error"]
    status, page = await get_json(port, "/api/games/tok/events?viewer=2", "seat-2")
    assert status == 200 and page["viewer"] == 2
    recs = await all_records(store, "tok")
    truth = Truth(recs, n_cards(recs))
    leaks = [
        x
        for e in page["entries"]
        for x in truth.leaks(e["seq"], json.dumps(e, separators=(",", ":")).encode(), 2)
    ]
    assert not leaks, leaks[:5]
    gate.set()
    await game
    status, page = await get_json(port, "/api/games/tok/events?viewer=god")
    assert status == 200 and page["over"]
    assert any(e["kind"] == "answer" for e in page["entries"])


async def test_last_event_id_resumes_exactly(
    store: RedisEventStore, server: tuple[Replay, int]
) -> None:
    _, port = server
    game = asyncio.create_task(play_live(store, "re", players=5, seed=6, pace=sleeper(1)))
    while not await store.head("re"):
        await asyncio.sleep(0.01)
    ids: list[int] = []
    last = None
    for _ in range(4):  # drop the connection three times mid-game
        sse = await open_sse(port, "/api/games/re/stream", last_event_id=last)
        for _ in range(120):
            m = await asyncio.wait_for(sse.next(), 30)
            if m is None or m.event == "end":
                break
            ids.append(int(m.id))
        sse.close()
        last = str(ids[-1])
    sse = await open_sse(port, "/api/games/re/stream", last_event_id=last)
    while (m := await asyncio.wait_for(sse.next(), 30)) is not None and m.event != "end":
        ids.append(int(m.id))
    await game
    _, page = await get_json(port, "/api/games/re/events")
    assert ids == [e["seq"] for e in page["entries"]]  # no gap, no repeat


async def test_delay_over_sse(store: RedisEventStore) -> None:
    """Entries are stamped with Redis TIME; the server measures the delay on Redis' clock
    (ServerClock), so each SSE message arrives no earlier than its append + the delay."""
    clock = ServerClock(store.client.time)
    await clock.sync()
    delay = 1_000
    replay = Replay(store, clock=clock, policy=lambda h: TablePolicy(spectator_delay_ms=delay))
    http = HttpServer(replay)
    port = await http.start()
    gate = asyncio.Queue[None]()

    async def pace(version: int) -> None:
        await gate.get()

    game = asyncio.create_task(play_live(store, "late", players=4, seed=2, pace=pace))
    while not await store.head("late"):
        await asyncio.sleep(0.01)
    sse = await open_sse(port, "/api/games/late/stream")
    feed = await replay.feed("late")
    got: list[tuple[int, int]] = []

    async def read() -> None:
        while (m := await sse.next()) is not None and m.event != "end":
            got.append((int(m.id), clock.now_ms()))

    reader = asyncio.create_task(read())
    for _ in range(25):
        for _ in range(2):
            gate.put_nowait(None)
        await asyncio.sleep(0.1)
    assert got
    stamped = {seq: t for seq, _, t in await store.read_timed("late")}
    for seq, at in got:
        assert feed.at_ms[seq - 1] == stamped[seq]  # released by the append time, not first seen
        assert at >= feed.at_ms[seq - 1] + delay
    assert not feed.over
    assert max(s for s, _ in got) < feed.version  # the newest entries are still held back
    game.cancel()
    reader.cancel()
    sse.close()
    await http.close()
    await replay.close()


async def test_lobby_static_files_and_errors(
    store: RedisEventStore, server: tuple[Replay, int]
) -> None:
    _, port = server
    await play_live(store, "fin", players=4, seed=1)
    status, body = await get_json(port, "/api/games")
    assert status == 200 and [g["id"] for g in body["games"]] == ["fin"]
    status, info = await get_json(port, "/api/games/fin")
    assert status == 200 and info["over"] and len(info["cards"]) > 100
    status, report = await get_json(port, "/api/games/fin/verify")
    assert status == 200 and report["ok"]
    status, page = await get(port, "/")
    assert status == 200 and b"<html" in page.lower()
    for path in ("/static/app.js", "/static/style.css"):
        assert (await get(port, path))[0] == 200
    for path, code in [
        ("/static/../core.py", 404),
        ("/static/.x", 404),
        ("/nope", 404),
        ("/api/games/none/events", 404),
        ("/api/games/b%7Bad/events", 400),
        ("/api/games/fin/events?viewer=x", 400),
        ("/api/games/fin/events?from=x", 400),
        ("/api/games?status=maybe", 400),
    ]:
        assert (await get(port, path))[0] == code, path
