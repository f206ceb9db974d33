"""People's engines (issue 44): a person's game is served by the engine the web server and the
bot workers are given as ``--people-engine`` (``arena engine --role people``), a bot-only game
by the others, so a person's call does not wait on the event loop the bot-only games' sessions
keep busy. Real processes: two engines (e0 takes the matches, e1 is the people's), one bot
worker given both, the web server's play API in this process. Each engine says at exit how many
answers it logged for each kind of table (its `table_answers` line, the metric
``arena_engine_table_answers``), which the games' logs account for to the answer.

A bot decision of a person's game reaches the bot worker pushed on a session or read from the
decisions stream: the first decision of a game made while its engine had no session open comes
that way. The worker routed only the pushed ones by their `people` flag and sent a stream one to
the general engine, which logged a person's table's answer there (CI: ``{'people': 1}`` on e0,
the lord's first decision, the bot worker's sessions not yet open when e0 made the game). So the
test runs twice: with sessions, and with none (every decision from the stream)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.bots.cluster import SECRET, spawn_bots, spawn_engine, stop
from services.bots.cluster import _ready as ready
from services.contracts.streams import MATCHES, NewMatch, Seat
from services.eventlog.catalog import read_archived
from services.eventlog.entry import ANSWER, decode_entry
from services.eventlog.records import AnswerRecord, decode_payload
from services.eventlog.redis_store import RedisEventStore
from services.redisinfra.streams import publish_message

from .fixtures import web_server
from .test_fuzz_routes import call
from .test_hung_engine import _decision, _picks


async def _answers(store: RedisEventStore, archive_dir: Path, game: str) -> list[AnswerRecord]:
    """The answers logged in `game`: from its archive once it ended, else its live log."""
    records = await read_archived(archive_dir, game)
    if records is None:
        records = [data for _, data in await store.read(game)]
    entries = map(decode_entry, records)
    return [decode_payload(e.payload, AnswerRecord) for e in entries if e.kind == ANSWER]


@pytest.mark.parametrize("sessions", [True, False], ids=["sessions", "stream"])
async def test_a_persons_game_goes_to_the_peoples_engine_and_bot_games_do_not(
    redis_url: str,
    redis_namespace: str,
    redis_client: aioredis.Redis,
    tmp_path: Path,
    sessions: bool,
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
        bots = spawn_bots(
            redis_url,
            ns,
            "b0",
            [ready0["port"]],
            sessions=sessions,
            extra=("--people-engine", people),
        )
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
            # the bot-only game under way on e0: 20 answers in its log (its head counted
            # entries, several an answer, and 40 of them were as few as 11 answers)
            for _ in range(200):
                if len(await _answers(store, archive_dir, theirs)) >= 20:
                    break
                await asyncio.sleep(0.05)
    finally:
        # the bot worker first: nothing answers once it is gone (a deadline's default answer
        # is a minute away), so the logs read below hold every answer the engines counted
        lines = stop(procs[2:]) + stop(procs[:2])
    exits: dict[str, dict[str, Any]] = {
        line["consumer"]: line for line in lines if "table_answers" in line
    }
    general, peoples = exits["e0"]["table_answers"], exits["e1"]["table_answers"]
    person = await _answers(store, archive_dir, mine)
    bot_only = await _answers(store, archive_dir, theirs)
    assert len(bot_only) >= 20, len(bot_only)
    # every answer in the logs was counted by the engine that logged it, but for at most the
    # one of each game in flight as the bot worker went: its call cancelled, the engine's
    # append with it, after the write had gone to Redis (logged, not counted: 1 run of ~30)
    people_counted = general.get("people", 0) + peoples.get("people", 0)
    bots_counted = general.get("bots", 0) + peoples.get("bots", 0)
    assert len(person) - 1 <= people_counted <= len(person), (general, peoples, len(person))
    assert len(bot_only) - 1 <= bots_counted <= len(bot_only), (general, peoples, len(bot_only))
    # the person's game on e1 alone: the person's answers and its bots' (the lord's first too,
    # which e0 made the game with: pushed, or from the stream, it says a person sits there)
    assert [a.auto for a in person if a.seat == 1] == [False] * answered
    assert general.get("people", 0) == 0, (general, [(a.seat, a.auto) for a in person])
    # the bot-only game on e0 alone (which made the person's game and answered none of it)
    assert peoples.get("bots", 0) == 0, peoples
