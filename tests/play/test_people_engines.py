"""People's engines (issue 44): a person's game is served by the engine the web server and the
bot workers are given as ``--people-engine`` (``arena engine --role people``), a bot-only game
by the others, so a person's call does not wait on the event loop the bot-only games' sessions
keep busy. Real processes: two engines (e0 takes the matches, e1 is the people's), one bot
worker given both, the web server's play API in this process. Each engine says at exit how many
answers it logged for each kind of table (its `table_answers` line, the metric
``arena_engine_table_answers``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from services.bots.cluster import SECRET, spawn_bots, spawn_engine, stop
from services.bots.cluster import _ready as ready
from services.contracts.streams import MATCHES, NewMatch, Seat
from services.eventlog.redis_store import RedisEventStore
from services.redisinfra.streams import publish_message

from .fixtures import web_server
from .test_fuzz_routes import call
from .test_hung_engine import _decision, _picks


async def test_a_persons_game_goes_to_the_peoples_engine_and_bot_games_do_not(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    ns = redis_namespace
    archive_dir = tmp_path / "archive"
    e0 = spawn_engine(redis_url, ns, "e0", archive_dir)
    e1 = spawn_engine(redis_url, ns, "e1", archive_dir, extra=("--role", "people"))
    procs = [e0, e1]
    try:
        ready0, ready1 = ready(e0), ready(e1)
        assert ready0["role"] == "all" and ready1["role"] == "people"
        people = f"127.0.0.1:{ready1['port']}"
        bots = spawn_bots(redis_url, ns, "b0", [ready0["port"]], extra=("--people-engine", people))
        procs.append(bots)
        ready(bots)
        store = RedisEventStore(redis_client, ns)
        async with web_server(
            store,
            redis_client,
            ns,
            SECRET.encode(),
            [f"127.0.0.1:{ready0['port']}"],
            people=[people],
        ) as web:
            assert web.play.engine.order(f"{ns}-any") == [1, 0]  # the people's first
            status, _, guest = await call(web.port, "POST", "/api/guests", {"name": "Ann"})
            assert status == 201
            auth = f"Bearer {guest['token']}"
            mine, theirs = f"{ns}-person", f"{ns}-bots"
            # the person at seat 1, random bots beside: the lord (seat 0, the first to decide)
            # is a bot, whose decision e0 pushes as it makes the game
            bot = Seat("bot:random", True)
            seats = [bot, Seat(guest["player"], name="Ann"), bot, bot]
            await web.play.sessions.seat_at(guest["player"], mine, 1, 3_600_000)
            for game, at in ((mine, seats), (theirs, [bot] * 4)):
                match = NewMatch(match_id=game, ruleset="standard", seats=at, seed=5)
                await publish_message(redis_client, ns, MATCHES, match)
            answered, last = 0, None
            # bounded: a game that never moves past the person's answer fails here, with what
            # it was waiting for, and does not hang the suite (CI ran into this twice)
            moving = asyncio.get_running_loop().time() + 60
            while answered < 2:
                d = await _decision(web.port, mine, auth, seat=1)
                if d["id"] == last:  # (the seat's view not yet past the answer)
                    assert asyncio.get_running_loop().time() < moving, (
                        f"the person's game did not move past answer {answered} in 60 s: {d}"
                    )
                    await asyncio.sleep(0.05)
                    continue
                last = d["id"]
                status, _, out = await call(
                    web.port,
                    "POST",
                    f"/api/games/{mine}/seats/1/answer",
                    {"decision": d["id"], "picks": _picks(d)},
                    auth,
                )
                assert status == 200, out
                answered += 1
            for _ in range(200):  # the bot-only game under way on e0
                if await store.head(theirs) >= 40:
                    break
                await asyncio.sleep(0.05)
            assert await store.head(theirs) >= 40
    finally:
        # the bot worker first: stopped together, the people's engine could go before it and
        # the worker's failover hand e0 a bot decision of the person's game (seen once: e0
        # answered one), which this test is not about (tests/engine/test_hung.py is)
        lines = stop(procs[2:]) + stop(procs[:2])
    exits: dict[str, dict[str, Any]] = {
        line["consumer"]: line for line in lines if "table_answers" in line
    }
    general, peoples = exits["e0"]["table_answers"], exits["e1"]["table_answers"]
    # the person's answers went to e1, and its bots' (the lord's first, which e0 pushed as it
    # made the game: the decision says a person sits there), and nothing of the bot-only game
    assert peoples.get("people", 0) > answered, peoples
    assert peoples.get("bots", 0) == 0, peoples
    # the bot-only game was played on e0, which made the person's game and answered none of it
    assert general.get("bots", 0) >= 20, general
    assert general.get("people", 0) == 0, general
