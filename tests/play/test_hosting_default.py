"""A person's own default 托管 level, kept on the server with their account, through the HTTP API.

Before, the bot level that plays a person's seat on 托管 was chosen per seat and per game: a
person who always wants `hard` chose it again at every table, and a time-out at a new table
played at the table's level. Now `PUT /api/me/settings {"hosted_level": "hard"}` is kept in
their player record in Redis; the web server records it for each seat it opens for them (a
`control` entry of reason `level` that hosts nothing) and for the live seat they hold when they
set it, so time-outs, 托管 asked without a level and a resignation play at it. What plays a
seat is what the engine names in the bot decisions it publishes (`bot:LEVEL`).
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
from services.eventlog.entry import CONTROL, decode_entry
from services.eventlog.records import SeatControl, decode_payload
from services.rules import api

from .fixtures import web_server
from .test_fuzz_routes import build, call, raw_call
from .test_hosting_level import _hosted

SECRET = b"hosting-default-secret-" + b"x" * 32
GAME = "lv1"  # (test_hosting_level's helpers name this game)
SETTINGS = "/api/me/settings"


@pytest.fixture
async def platform(redis_client: aioredis.Redis, redis_namespace: str) -> AsyncIterator[Any]:
    """An engine over gRPC and the web server; Ann and Bob signed in, seated nowhere yet."""
    store, side = InMemoryEventStore(), MemorySide()
    games = Games(store, side, SECRET, default_time_limit_ms=0)
    server, engine_port, checker = make_server(games)
    await server.start()
    await set_serving(checker)
    try:
        async with web_server(
            store, redis_client, redis_namespace, SECRET, [f"127.0.0.1:{engine_port}"]
        ) as web:
            auth, players = {}, {}
            for name in ("Ann", "Bob"):
                _, _, guest = await call(web.port, "POST", "/api/guests", {"name": name})
                auth[name] = f"Bearer {guest['token']}"
                players[name] = guest["player"]
            yield web, games, side, auth, players
    finally:
        await server.stop(None)


async def _sit(web: Any, games: Games, players: dict[str, str]) -> None:
    """Ann at seat 0, Bob at seat 1 of a table whose bot level is `easy` and whose seats go on
    托管 at the first time-out; bots at 2 and 3 (as a host that publishes the game does)."""
    seats = [Seat(players[n], name=n) for n in ("Ann", "Bob")]
    seats += [Seat("bot:easy", True), Seat("bot:easy", True)]
    match = NewMatch(
        match_id=GAME, ruleset="standard", seats=seats, seed=5, hosted_level="easy", hosted_after=1
    )
    await games.create_game(match)
    for seat, s in enumerate(seats[:2]):
        await web.play.sessions.seat_at(s.player, GAME, seat, 3_600_000)


async def _controls(games: Games) -> list[tuple[int, bool, str, str]]:
    out = []
    for _, data in await games.store.read(GAME):
        e = decode_entry(data)
        if e.kind == CONTROL:
            c = decode_payload(e.payload, SeatControl)
            out.append((c.seat, c.hosted, c.reason, c.level))
    return out


async def _time_out_until_asked_on_hosting(games: Games, side: MemorySide, seat: int) -> str:
    """Let `seat` time out (the others answer) until it is on 托管 and asked again; who the
    engine then asks to play it (`bot:LEVEL`)."""
    for _ in range(1000):
        hot = await games.get(GAME)
        d = api.pending(hot.game)
        assert d is not None
        if d.seat == seat and seat in hot.hosting.hosted:
            msgs = [m for m in side.decisions() if m.decision == hot.ids.opaque(d.id)]
            assert msgs, "the seat's decision was not handed to the bots"
            return msgs[-1].player
        if d.seat == seat:
            assert await games.sweep() >= 1  # its clock (0 ms) has run out: the server answers
        else:
            token = tokens.issue(SECRET, GAME, d.seat)
            picks = list(api.default_answer(d).picks)
            await games.submit_action(GAME, token, hot.ids.opaque(d.id), picks)
    raise AssertionError(f"seat {seat} never went on 托管")


async def test_the_default_level_plays_the_seats_time_outs_at_a_new_table(platform: Any) -> None:
    web, games, side, auth, players = platform
    # Ann sets her default before she sits down; another device (her token) reads it back
    status, _, out = await call(web.port, "PUT", SETTINGS, {"hosted_level": "hard"}, auth["Ann"])
    assert status == 200 and out == {"hosted_level": "hard"}, out
    status, _, out = await call(web.port, "GET", SETTINGS, auth=auth["Ann"])
    assert status == 200 and out == {"hosted_level": "hard"}, out
    status, _, out = await call(web.port, "GET", SETTINGS, auth=auth["Bob"])
    assert status == 200 and out == {"hosted_level": ""}, out  # Bob set none
    await _sit(web, games, players)
    # her page opens the seat: the level is recorded for it, hosting nothing, once
    for _ in range(2):
        status, _, view = await call(
            web.port, "GET", f"/api/games/{GAME}/seats/0", auth=auth["Ann"]
        )
        assert status == 200 and not view["hosted"], view
        status, _, me = await call(web.port, "GET", "/api/me", auth=auth["Ann"])
        assert status == 200 and me["seated"]["game"] == GAME, me
    assert await _controls(games) == [(0, False, "level", "hard")]
    # her silence puts the seat on 托管 at the first time-out: played at hard on an easy table
    assert await _time_out_until_asked_on_hosting(games, side, 0) == "bot:hard"
    # Bob, without a default, times out at the table's level
    assert await _time_out_until_asked_on_hosting(games, side, 1) == "bot:easy"
    # Bob sets a default mid-game: it applies to his live seat at once (on 托管: its bot's level)
    status, _, out = await call(web.port, "PUT", SETTINGS, {"hosted_level": "normal"}, auth["Bob"])
    assert status == 200 and out == {"hosted_level": "normal"}, out
    hot = await games.get(GAME)
    assert hot.hosting.player(1, "") == "bot:normal" and 1 in hot.hosting.hosted
    # Ann takes her seat back, then asks for 托管 without a level: her default, hard
    status, out = await _hosted(web.port, auth["Ann"], 0, {"hosted": False})
    assert status == 200 and not out["hosted"], out
    status, out = await _hosted(web.port, auth["Ann"], 0, {"hosted": True})
    assert status == 200 and out["hosted"], out
    assert await _time_out_until_asked_on_hosting(games, side, 0) == "bot:hard"
    # another engine worker loading the game agrees (the levels are in its log)
    games.evict(GAME)
    assert (await games.get(GAME)).hosting.levels == {0: "hard", 1: "normal"}
    # every viewer reads the entries; the level alone changed who plays nothing
    status, raw, page = await call(web.port, "GET", f"/api/games/{GAME}/events?viewer=spectator")
    assert status == 200, raw
    controls = [e["control"] for e in page["entries"] if e["kind"] == "control"]
    assert [(c["seat"], c["hosted"], c["reason"], c.get("level", "")) for c in controls] == [
        (0, False, "level", "hard"),
        (0, True, "timeouts", ""),
        (1, True, "timeouts", ""),
        (1, True, "level", "normal"),
        (0, False, "taken_back", ""),
        (0, True, "asked", ""),
    ], json.dumps(controls)
    status, _, view = await call(web.port, "GET", f"/api/games/{GAME}/seats/0", auth=auth["Ann"])
    assert status == 200 and view["hosted"], view
    # resigning leaves the seat to the bot at her level
    status, _, out = await call(
        web.port, "POST", f"/api/games/{GAME}/seats/0/resign", auth=auth["Ann"]
    )
    assert status == 200 and out["hosted"], out
    assert (await games.get(GAME)).hosting.player(0, "") == "bot:hard"


async def test_bad_settings_are_refused_and_change_nothing(
    platform: Any, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    web, games, side, auth, players = platform
    status, _, out = await call(web.port, "PUT", SETTINGS, {"hosted_level": "easy"}, auth["Ann"])
    assert status == 200, out
    record = f"{redis_namespace}:play:p:{players['Ann']}"
    before = await redis_client.hgetall(record)
    assert before[b"hosted_level"] == b"easy"

    async def refused(status: int, body: bytes | None, headers: dict[str, str]) -> str:
        got, raw = await raw_call(web.port, build("PUT", SETTINGS, body, headers))
        assert got == status, (got, raw)
        assert await redis_client.hgetall(record) == before  # nothing changed
        _, _, now = await call(web.port, "GET", SETTINGS, auth=auth["Ann"])
        assert now == {"hosted_level": "easy"}
        return str(json.loads(raw)["error"])

    ann = {"Authorization": auth["Ann"]}
    assert "hosted_level" in await refused(400, b'{"hosted_level": "godlike"}', ann)
    assert "hosted_level" in await refused(400, b'{"hosted_level": "random"}', ann)  # a policy
    for wrong in (b"1", b"null", b"true", b'["hard"]', b'{"x": 1}', b'"' + b"h" * 40 + b'"'):
        await refused(400, b'{"hosted_level": ' + wrong + b"}", ann)
    await refused(400, b"{}", ann)  # every field of the settings (PUT)
    await refused(400, b'{"hosted_level": "hard", "admin": true}', ann)
    await refused(400, b"not json", ann)
    await refused(415, b'{"hosted_level": "hard"}', ann | {"Content-Type": "text/plain"})
    await refused(401, b'{"hosted_level": "hard"}', {})  # not signed in
    await refused(401, b'{"hosted_level": "hard"}', {"Authorization": "Bearer junk"})
    got, _ = await raw_call(web.port, build("GET", SETTINGS))
    assert got == 401
    # from another site's page (CSRF): 403, nothing changed
    await refused(403, b'{"hosted_level": "hard"}', ann | {"Origin": "http://evil.example"})
    # "" clears it
    status, _, out = await call(web.port, "PUT", SETTINGS, {"hosted_level": ""}, auth["Ann"])
    assert status == 200 and out == {"hosted_level": ""}, out
    assert b"hosted_level" not in await redis_client.hgetall(record)
    status, _, out = await call(web.port, "GET", SETTINGS, auth=auth["Ann"])
    assert out == {"hosted_level": ""}
