"""Open tables: created with their creator's settings, joined from the lobby, started when full or
with bots of the chosen level after the bot wait; bad settings change nothing."""

from __future__ import annotations

import json
import random

import grpc
import pytest
import redis.asyncio as aioredis

from services.contracts.streams import NewMatch, decode
from services.matchmaking.clock import ManualClock
from services.matchmaking.core import Matchmaker, Refused
from services.matchmaking.modes import build_modes
from services.matchmaking.tables import EMPTY_GRACE_MS, TableSettings, bot_levels
from services.proto_gen.arena.v1 import matchmaker_pb2 as pb

from .test_grpc import Env, env  # noqa: F401  (the gRPC fixture)

SECRET = b"mm-tables"


def make(client: aioredis.Redis, ns: str, clock: ManualClock) -> Matchmaker:
    return Matchmaker(
        client,
        build_modes(),
        SECRET,
        clock,
        namespace=ns,
        rng=random.Random(5),
        ticket_ttl_ms=60_000,
    )


async def matches(client: aioredis.Redis, ns: str) -> list[NewMatch]:
    return [decode(f, NewMatch) for _, f in await client.xrange(f"{ns}:{{mm}}:matches")]


async def test_a_table_starts_when_full_with_its_settings_and_names(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(1_000)
    mm = make(redis_client, redis_namespace, clock)
    settings = TableSettings(
        ruleset="chengtian", players=2, bot_after_ms=0, time_limit_ms=20_000, hosted_after=3
    )
    first = await mm.create_table("ann", "<i>Ann</i>", settings)
    table = first.mode
    listed = await mm.tables.listing()
    assert [(t.table, t.waiting, t.creator) for t in listed] == [(table, ["<i>Ann</i>"], "ann")]
    assert listed[0].settings.bot_level == bot_levels()[0]  # the default level, made explicit
    assert await mm.tick() == []  # alone, and the table adds no bots (bot wait 0 = never)
    second = await mm.enqueue("bob", "", 0, "鲍勃", table)
    formed = await mm.tick()
    assert len(formed) == 1 and set(formed[0].tickets) == {first.ticket, second.ticket}
    (match,) = await matches(redis_client, redis_namespace)
    assert match.ruleset == "chengtian" and match.time_limit_ms == 20_000
    assert match.hosted_after == 3 and match.mode == "chengtian-2"
    assert sorted(s.name for s in match.seats) == ["<i>Ann</i>", "鲍勃"]
    assert not any(s.bot for s in match.seats)
    assert await mm.tables.listing() == []
    with pytest.raises(Refused) as err:
        await mm.enqueue("cy", "", 0, "Cy", table)
    assert err.value.code == "FAILED_PRECONDITION"


async def test_bots_of_the_chosen_level_fill_the_table_after_its_wait(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(1_000)
    mm = make(redis_client, redis_namespace, clock)
    level = bot_levels()[-1]
    settings = TableSettings(ruleset="standard", players=5, bot_after_ms=4_000, bot_level=level)
    await mm.create_table("ann", "Ann", settings)
    clock.advance(3_999)
    assert await mm.tick() == []
    clock.advance(1)
    (formed,) = await mm.tick()
    (match,) = await matches(redis_client, redis_namespace)
    players = [s.player for s in match.seats]
    assert players.count(f"bot:{level}") == 4 and "ann" in players
    assert formed.seats[formed.tickets[next(iter(formed.tickets))]].player == "ann"


async def test_bad_settings_and_names_change_nothing(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    mm = make(redis_client, redis_namespace, ManualClock(0))
    good = TableSettings(ruleset="standard", players=5)
    bad = [
        TableSettings(ruleset="nope", players=5),
        TableSettings(ruleset="standard", players=40),
        TableSettings(ruleset="extended", players=9),
        TableSettings(ruleset="standard", players=5, options={"bogus": 1}),
        TableSettings(ruleset="standard", players=5, bot_level="godlike"),
        TableSettings(ruleset="standard", players=5, hosted_after=99),
        TableSettings(ruleset="standard", players=5, time_limit_ms=5),
        TableSettings(ruleset="standard", players=5, bot_after_ms=-1),
    ]
    for s in bad:
        with pytest.raises(Refused) as err:
            await mm.create_table("ann", "Ann", s)
        assert err.value.code == "INVALID_ARGUMENT", s
    for name in (" ", "x" * 33, "a\u0000b", "a\u202eb", "line\nbreak"):
        with pytest.raises(Refused) as err:
            await mm.create_table("ann", name, good)
        assert err.value.code == "INVALID_ARGUMENT", name
    assert await redis_client.keys(f"{redis_namespace}*") == []
    with pytest.raises(Refused) as err:
        await mm.enqueue("ann", "", 0, "Ann", "t-" + "0" * 32)
    assert err.value.code == "NOT_FOUND"


async def test_an_empty_table_is_closed_after_the_grace(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(0)
    mm = make(redis_client, redis_namespace, clock)
    t = await mm.create_table("ann", "Ann", TableSettings(ruleset="standard", players=5))
    assert await mm.cancel(t.ticket, "ann")
    await mm.tick()
    assert len(await mm.tables.listing()) == 1  # within the grace: the creator may come back
    clock.advance(EMPTY_GRACE_MS)
    await mm.tick()
    assert await mm.tables.listing() == []
    with pytest.raises(Refused) as err:
        await mm.enqueue("bob", "", 0, "Bob", t.mode)
    assert err.value.code == "FAILED_PRECONDITION"


async def test_tables_over_grpc(env: Env) -> None:  # noqa: F811
    mm, clock, stub, _ = env
    r = await stub.CreateTable(
        pb.CreateTableRequest(
            player="ann",
            name="Ann",
            settings=pb.TableSettings(
                ruleset="standard", players=5, options_json='{"generals": "draft"}'
            ),
        )
    )
    assert r.ticket.table == r.table.table_id and r.ticket.players == 5 and r.ticket.mode == ""
    assert list(r.table.waiting) == ["Ann"] and json.loads(r.table.settings.options_json) == {
        "generals": "draft"
    }
    clock.advance(1)
    t = await stub.Enqueue(pb.EnqueueRequest(player="bob", name="Bob", table=r.table.table_id))
    assert t.table == r.table.table_id and t.players == 5
    listed = await stub.ListTables(pb.ListTablesRequest())
    assert [list(x.waiting) for x in listed.tables] == [["Ann", "Bob"]]
    modes = await stub.ListModes(pb.ListModesRequest())
    assert list(modes.bot_levels) == bot_levels()
    for settings in (
        pb.TableSettings(ruleset="standard", players=5, options_json="[1]"),
        pb.TableSettings(ruleset="standard", players=5, options_json="{"),
        pb.TableSettings(ruleset="", players=5),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.CreateTable(pb.CreateTableRequest(player="cy", name="Cy", settings=settings))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.ListTables(pb.ListTablesRequest(limit=1000))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
