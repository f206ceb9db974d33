"""托管 at the person's own level, not the table's (issue 39 loose end), through the HTTP API.

Before, a seat on 托管 was always played at the table's `bot_level`, whoever sat there. Now
`POST .../hosted {"hosted": true, "level": "hard"}` has that seat played at `hard`, the other
people's seats keep the table's level, and the choice holds for the seat's later 托管 (taken
back and handed over again without a level, a reload by another engine worker). What plays a
seat is what the engine names in the bot decisions it publishes (`bot:LEVEL`, which the bot
workers play): that is checked, with the `control` entries every viewer reads.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.contracts import tokens
from services.contracts.streams import NewMatch, Seat
from services.engine.grpc_server import make_server, set_serving
from services.engine.service import Games
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore
from services.rules import api

from .fixtures import web_server
from .test_fuzz_routes import call

SECRET = b"hosting-level-secret-" + b"x" * 32
GAME = "lv1"


@pytest.fixture
async def table(redis_client: aioredis.Redis, redis_namespace: str) -> AsyncIterator[Any]:
    """Ann at seat 0 and Bob at seat 1 of a table whose bot level is `easy`; bots at 2 and 3."""
    store, side = InMemoryEventStore(), MemorySide()
    games = Games(store, side, SECRET, default_time_limit_ms=0)
    server, engine_port, checker = make_server(games)
    await server.start()
    await set_serving(checker)
    engines = [f"127.0.0.1:{engine_port}"]
    try:
        async with web_server(store, redis_client, redis_namespace, SECRET, engines) as web:
            auth = {}
            seats = []
            for name in ("Ann", "Bob"):
                _, _, guest = await call(web.port, "POST", "/api/guests", {"name": name})
                auth[name] = f"Bearer {guest['token']}"
                seats.append(Seat(guest["player"], name=name))
            seats += [Seat("bot:easy", True), Seat("bot:easy", True)]
            match = NewMatch(
                match_id=GAME, ruleset="standard", seats=seats, seed=5, hosted_level="easy"
            )
            await games.create_game(match)
            for seat, s in enumerate(seats[:2]):
                await web.play.sessions.seat_at(s.player, GAME, seat, 3_600_000)
            yield web.port, games, side, auth
    finally:
        await server.stop(None)


def _played_by(games: Games, side: MemorySide, seat: int) -> str:
    """Who the engine asked to play `seat`'s pending decision (the last message for it)."""
    hot = games.cache[GAME]
    d = api.pending(hot.game)
    assert d is not None and d.seat == seat
    msgs = [m for m in side.decisions() if m.decision == hot.ids.opaque(d.id)]
    assert msgs, "the seat's decision was not handed to the bots"
    return msgs[-1].player


async def _until_asked(games: Games, seat: int) -> None:
    """Answer every other seat's decision with its default until `seat` decides."""
    for _ in range(500):
        hot = await games.get(GAME)
        d = api.pending(hot.game)
        assert d is not None
        if d.seat == seat:
            return
        token = tokens.issue(SECRET, GAME, d.seat)
        picks = list(api.default_answer(d).picks)
        await games.submit_action(GAME, token, hot.ids.opaque(d.id), picks)
    raise AssertionError(f"seat {seat} was never asked")


async def _hosted(port: int, auth: str, seat: int, body: dict[str, Any]) -> tuple[int, Any]:
    status, _, out = await call(port, "POST", f"/api/games/{GAME}/seats/{seat}/hosted", body, auth)
    return status, out


async def test_each_person_chooses_the_level_of_their_own_seats_hosting(table: Any) -> None:
    port, games, side, auth = table
    await _until_asked(games, 0)
    # a level that is not offered: 400, and nothing changes
    before = await games.store.head(GAME)
    status, out = await _hosted(port, auth["Ann"], 0, {"hosted": True, "level": "godlike"})
    assert status == 400 and "level" in out["error"], out
    assert await games.store.head(GAME) == before
    # Ann: 托管 at hard, on an easy table
    status, out = await _hosted(port, auth["Ann"], 0, {"hosted": True, "level": "hard"})
    assert status == 200 and out["hosted"], out
    assert _played_by(games, side, 0) == "bot:hard"
    # Bob chooses nothing: his seat is played at the table's level
    status, out = await _hosted(port, auth["Bob"], 1, {"hosted": True})
    assert status == 200 and out["hosted"], out
    await _until_asked(games, 1)
    assert _played_by(games, side, 1) == "bot:easy"
    # Bob changes his mind while on 托管: the level changes, he stays on 托管
    status, out = await _hosted(port, auth["Bob"], 1, {"hosted": True, "level": "normal"})
    assert status == 200 and out["hosted"], out
    assert _played_by(games, side, 1) == "bot:normal"
    # Ann takes her seat back, then hands it over again without a level: still hard
    status, out = await _hosted(port, auth["Ann"], 0, {"hosted": False})
    assert status == 200 and not out["hosted"], out
    status, out = await _hosted(port, auth["Ann"], 0, {"hosted": True})
    assert status == 200 and out["hosted"], out
    await _until_asked(games, 0)
    assert _played_by(games, side, 0) == "bot:hard"
    # another engine worker loading the game from its log agrees (the levels are in the log)
    games.evict(GAME)
    hot = await games.get(GAME)
    assert hot.hosting.levels == {0: "hard", 1: "normal"} and hot.hosting.level == "easy"
    # every viewer reads the choice in the control entries
    status, raw, page = await call(port, "GET", f"/api/games/{GAME}/events?viewer=spectator")
    assert status == 200, raw
    controls = [e["control"] for e in page["entries"] if e["kind"] == "control"]
    assert [(c["seat"], c["hosted"], c.get("level", "")) for c in controls] == [
        (0, True, "hard"),
        (1, True, ""),
        (1, True, "normal"),
        (0, False, ""),
        (0, True, ""),
    ], json.dumps(controls)
