"""A person's answer when the game's engine hangs (issues 46 and 39): two real engine processes,
the one the web server sends the game's calls to stopped with SIGSTOP mid-game. A stopped
engine keeps its port open and never answers; before, the person's answer, 托管 and resign
waited for it and failed (503 after the 5 s timeout) however long it stayed stopped. Now the
call passes it over after `Engine.try_s` and the other engine, which loads the game from its
log, takes the answer; later calls go straight there while the stopped one is passed over."""

from __future__ import annotations

import asyncio
import signal
import time
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.bots.cluster import SECRET, start_engines, stop
from services.contracts.streams import MATCHES, NewMatch, Seat
from services.eventlog.redis_store import RedisEventStore
from services.play.clients import Engine
from services.redisinfra.streams import publish_message

from .fixtures import web_server
from .test_fuzz_routes import call


def _stopped(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


def _game_for(index: int, ns: str) -> str:
    """A game id whose calls the web server sends to engine `index` of two first."""
    return next(g for k in range(100) if zlib.crc32((g := f"{ns}-p{k}").encode()) % 2 == index)


@pytest.fixture
async def web(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> AsyncIterator[dict[str, Any]]:
    ns = redis_namespace
    engines = start_engines(redis_url, ns, 2, tmp_path / "archive")
    secret = SECRET.encode()
    addresses = [f"127.0.0.1:{port}" for _, port in engines]
    store = RedisEventStore(redis_client, ns)
    try:
        # no matchmaker: the game is published here
        async with web_server(store, redis_client, ns, secret, addresses) as web:
            yield {
                "port": web.port,
                "engines": engines,
                "sessions": web.play.sessions,
                "engine": web.play.engine,
            }
    finally:
        for proc, _ in engines:
            proc.send_signal(signal.SIGCONT)
        stop([p for p, _ in engines])


async def _decision(port: int, game: str, auth: str, seat: int = 0) -> dict[str, Any]:
    """The seat's pending decision, once the game has started (and it is the seat's turn)."""
    for _ in range(200):
        status, _, body = await call(port, "GET", f"/api/games/{game}/seats/{seat}", auth=auth)
        if status == 200 and body.get("decision"):
            d: dict[str, Any] = body["decision"]
            return d
        await asyncio.sleep(0.05)
    raise AssertionError(f"no decision for seat {seat} of {game}: {status} {body}")


def _picks(d: dict[str, Any]) -> list[str]:
    return [o["key"] for o in d["options"]][: max(d["min"], 1 if d["options"] else 0)]


async def test_a_persons_answer_lands_while_the_games_engine_is_stopped(
    web: dict[str, Any], redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    ns, port = redis_namespace, web["port"]
    status, _, guest = await call(port, "POST", "/api/guests", {"name": "Ann"})
    assert status == 201
    auth = f"Bearer {guest['token']}"
    engine: Engine = web["engine"]
    (e0, _), _ = web["engines"]
    game = _game_for(0, ns)  # the web server sends its calls to e0 first
    assert engine.order(game) == [0, 1]
    # the person at seat 0 (the lord: the first to decide), bots at the others (no bot worker
    # runs: the game waits on the person)
    seats = [Seat(guest["player"], name="Ann")] + [Seat("bot:random", True) for _ in range(3)]
    await publish_message(
        redis_client, ns, MATCHES, NewMatch(match_id=game, ruleset="standard", seats=seats, seed=3)
    )
    await web["sessions"].seat_at(guest["player"], game, 0, 3_600_000)
    d = await _decision(port, game, auth)  # asked of e0: the game is hot there
    store = RedisEventStore(redis_client, ns)
    before = await store.head(game)
    e0.send_signal(signal.SIGSTOP)
    for _ in range(100):  # (the signal takes a moment to land)
        if _stopped(e0.pid):
            break
        await asyncio.sleep(0.02)
    assert _stopped(e0.pid)
    t0 = time.monotonic()
    status, _, out = await call(
        port,
        "POST",
        f"/api/games/{game}/seats/0/answer",
        {"decision": d["id"], "picks": _picks(d)},
        auth,
    )
    took = time.monotonic() - t0
    assert status == 200, out  # before: 503, the engine did not answer
    assert not out["duplicate"]
    assert await store.head(game) > before  # the answer is in the game's log
    # the next decision and answer go straight to e1 (e0 is passed over while it is down)
    d2 = await _decision(port, game, auth)
    assert d2["id"] != d["id"]
    assert engine.order(game) == [1, 0]
    status, _, out = await call(
        port, "POST", f"/api/games/{game}/seats/0/hosted", {"hosted": True}, auth
    )
    assert status == 200 and out["hosted"], out
    status, _, out = await call(port, "POST", f"/api/games/{game}/seats/0/resign", None, auth)
    assert status == 200 and out["hosted"], out
    assert _stopped(e0.pid), "e0 woke before the answers landed"
    print(f"the answer landed {took:.1f} s after it was sent (try_s {engine.try_s} s)")
