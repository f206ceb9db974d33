"""The engine's mark beside a people's game's appends (services/readside/decisions.py `Mark`):
a person's seat stream shows another seat's pending decision from it instead of asking the
engine after every bot move (issue 44). What each seat is shown from it must be exactly what
the engine's GetDecision tells that seat at the same moment (another seat's public decision
and nothing of a secret one; its own is still asked of the engine, which alone sends its
options), at every append of a whole game, two people and two bots at the table."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.bots.random_policy import random_picks
from services.contracts import tokens
from services.engine.service import Games, NewMatch
from services.engine.side import RedisSide
from services.eventlog import RedisEventStore, Seat
from services.readside.decisions import Asked, asked_from, read_mark
from services.redisinfra.redis_client import connect
from services.rules import api

SECRET = b"marks-test-secret"


@pytest.fixture
async def client(redis_url: str, redis_namespace: str) -> AsyncIterator[aioredis.Redis]:
    c = connect(redis_url)
    try:
        yield c
    finally:
        keys = [k async for k in c.scan_iter(match=f"{redis_namespace}*", count=1000)]
        if keys:
            await c.delete(*keys)
        await c.aclose()


async def _rows(client: aioredis.Redis, store: RedisEventStore, game: str) -> list[Any]:
    return list(await client.xrange(store.log_key(game)))


async def test_each_seat_is_shown_from_the_mark_what_the_engine_would_show_it(
    client: aioredis.Redis, redis_namespace: str
) -> None:
    ns = redis_namespace
    store = RedisEventStore(client, ns)
    games = Games(store, RedisSide(client, ns), SECRET)
    bot = Seat("bot:random", bot=True)
    seats = [Seat("ann"), bot, Seat("bob"), bot]
    await games.create_game(NewMatch(match_id="people", ruleset="standard", seats=seats, seed=11))
    await games.create_game(NewMatch(match_id="bots", ruleset="standard", seats=[bot] * 4, seed=11))
    compared, own, hidden, appends = 0, 0, 0, 0
    key = store.log_key("people")
    for step in range(150):
        hot = await games.get("people")
        d = api.pending(hot.game)
        if d is None or hot.game.over:
            break
        [(_, fields)] = await client.xrevrange(key, "+", "-", count=1)
        mark = read_mark(fields[b"p"])  # beside the append's last entry
        assert mark is not None
        appends += 1
        for viewer in range(len(seats)):
            position, over, shown = await games.decision("people", viewer)
            assert not over
            got = asked_from(mark, viewer, position)
            if got is None:  # the viewer's own decision: the engine is asked, with options
                assert shown is not None and shown.mine and shown.options
                own += 1
                continue
            assert got == Asked(position, shown), (step, viewer, mark)
            compared += 1
            hidden += shown is None
        seat = d.seat
        token = tokens.issue(SECRET, "people", seat, bot=seats[seat].bot)
        await games.submit_action("people", token, hot.ids.opaque(d.id), random_picks(step, d))
    assert appends > 50 and own > 10 and compared > 100, (appends, own, compared)
    assert 0 < hidden < compared  # some were withheld from the other seats, some shown
    # one mark an append, on its last entry: none on the entries before it
    marks = [f for _, f in await _rows(client, store, "people") if b"p" in f]
    assert appends <= len(marks) <= appends + 1
    # a bot-only game's log carries no mark: nobody's seat stream reads it
    assert not [f for _, f in await _rows(client, store, "bots") if b"p" in f]


async def test_a_spectator_is_shown_from_the_mark_what_the_engine_would_show_it(
    client: aioredis.Redis, redis_namespace: str
) -> None:
    """A live spectator's feed takes the public pending decision from the mark beside its last
    entry (feed.py `public_of`) instead of GetDecision: at every append of a whole people's
    game it is exactly what GetDecision without a seat token says (who is asked and the kind,
    only for the kinds a spectator may see; nothing of the rest)."""
    from services.readside.decisions import Pending
    from services.readside.feed import public_of

    ns = redis_namespace
    store = RedisEventStore(client, ns)
    games = Games(store, RedisSide(client, ns), SECRET)
    bot = Seat("bot:random", bot=True)
    seats = [Seat("ann"), bot, Seat("bob"), bot, bot]
    await games.create_game(NewMatch(match_id="watched", ruleset="standard", seats=seats, seed=5))
    key = store.log_key("watched")
    shown_n, withheld = 0, 0
    for step in range(200):
        hot = await games.get("watched")
        d = api.pending(hot.game)
        if d is None or hot.game.over:
            break
        [(_, fields)] = await client.xrevrange(key, "+", "-", count=1)
        mark = read_mark(fields[b"p"])
        assert mark is not None
        position, over, shown = await games.decision("watched", api.SPECTATOR)
        assert not over
        want = None if shown is None else Pending(shown.version, shown.seat, shown.kind)
        assert public_of(mark, position) == want, (step, mark, shown)
        assert shown is None or (not shown.mine and not shown.options and not shown.info)
        shown_n += shown is not None
        withheld += shown is None
        token = tokens.issue(SECRET, "watched", d.seat, bot=seats[d.seat].bot)
        await games.submit_action("watched", token, hot.ids.opaque(d.id), random_picks(step, d))
    assert shown_n > 20 and withheld > 5, (shown_n, withheld)
