"""Matchmaker core against a real Redis, with a manual clock: TTL, cancel, backfill, bad input."""

from __future__ import annotations

import asyncio
import random

import pytest
import redis.asyncio as aioredis

from services.contracts import tokens
from services.contracts.streams import NewMatch, Seat, decode
from services.matchmaking.clock import ManualClock
from services.matchmaking.core import Matchmaker, Refused
from services.matchmaking.modes import Policy, build_modes

SECRET = b"mm-test"
POLICY = Policy(bot_after_ms=20_000, min_humans=2, window=3.0, widen_per_s=1.0)


def make(client: aioredis.Redis, ns: str, clock: ManualClock, ttl: int = 10_000) -> Matchmaker:
    return Matchmaker(
        client,
        build_modes(default=POLICY),
        SECRET,
        clock,
        namespace=ns,
        ticket_ttl_ms=ttl,
        rng=random.Random(1),
    )


async def matches(client: aioredis.Redis, ns: str) -> list[NewMatch]:
    return [decode(f, NewMatch) for _, f in await client.xrange(f"{ns}:{{mm}}:matches")]


def test_modes_come_from_the_rulesets() -> None:
    modes = build_modes()
    for n in range(4, 11):
        assert modes[f"standard-{n}"].players == n
        assert modes[f"standard-{n}"].ruleset == "standard"
    assert modes["honglou-10"].ruleset == "honglou"


async def test_full_table_published_once_with_tokens(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(1_000_000)
    mm = make(redis_client, redis_namespace, clock)
    tickets = [await mm.enqueue(f"p{i}", "standard-5") for i in range(6)]
    formed = await mm.tick()
    assert len(formed) == 1 and len(formed[0].tickets) == 5
    assert await mm.tick() == []  # the sixth waits; nothing is formed twice
    msgs = await matches(redis_client, redis_namespace)
    assert len(msgs) == 1
    match = msgs[0]
    assert match.ruleset == "standard" and len(match.seats) == 5 and match.mode == "standard-5"
    toks = match.tokens
    assert set(formed[0].tickets) < {t.ticket for t in tickets}
    for tid in formed[0].tickets:
        info = await mm.ticket(tid)
        assert info is not None and info.state == "matched" and info.game == formed[0].game
        claims = tokens.verify(SECRET, info.token, now_ms=clock.now_ms())
        assert (claims.g, claims.s) == (info.game, info.seat)
        assert toks[info.seat] == info.token
        assert match.seats[info.seat] == Seat(info.player, False, info.player)  # no name: the id
    (rest,) = [t for t in tickets if t.ticket not in formed[0].tickets]
    left = await mm.ticket(rest.ticket)
    assert left is not None and left.state == "queued"
    assert await mm.status("standard-5") == (1, 0)
    # a matched player may queue again
    await mm.enqueue(match.seats[formed[0].tickets[tid]].player, "standard-5")


async def test_ttl_expiry_and_refresh(redis_client: aioredis.Redis, redis_namespace: str) -> None:
    clock = ManualClock(0)
    mm = make(redis_client, redis_namespace, clock, ttl=10_000)
    a = await mm.enqueue("a", "standard-8")
    b = await mm.enqueue("b", "standard-8")
    clock.advance(6_000)
    await mm.refresh(a.ticket)  # a's watcher is alive: a lives until 16 s
    clock.advance(5_000)
    await mm.tick()
    ia, ib = await mm.ticket(a.ticket), await mm.ticket(b.ticket)
    assert ia is not None and ia.state == "queued"
    assert ib is not None and ib.state == "expired"
    assert await mm.status("standard-8") == (1, 11_000)
    clock.advance(6_000)
    await mm.tick()
    ia = await mm.ticket(a.ticket)
    assert ia is not None and ia.state == "expired"
    assert await mm.status("standard-8") == (0, 0)
    await mm.enqueue("b", "standard-8")  # an expired ticket frees the player


async def test_cancel_and_bad_input_change_nothing(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(0)
    mm = make(redis_client, redis_namespace, clock)
    t = await mm.enqueue("alice", "standard-5")
    before = sorted(await redis_client.keys(f"{redis_namespace}*"))

    async def code(coro: object) -> str:
        with pytest.raises(Refused) as err:
            await coro  # type: ignore[misc]
        return err.value.code

    assert await code(mm.enqueue("alice", "standard-5")) == "ALREADY_EXISTS"
    assert await code(mm.enqueue("alice", "standard-6")) == "ALREADY_EXISTS"
    assert await code(mm.enqueue("bob", "chess-2")) == "INVALID_ARGUMENT"
    assert await code(mm.enqueue("bob", "standard-11")) == "INVALID_ARGUMENT"
    assert await code(mm.enqueue("bad|id", "standard-5")) == "INVALID_ARGUMENT"
    assert await code(mm.cancel(t.ticket, "mallory")) == "PERMISSION_DENIED"
    assert await code(mm.cancel("0" * 32, "alice")) == "NOT_FOUND"
    assert await code(mm.status("nope")) == "INVALID_ARGUMENT"
    assert sorted(await redis_client.keys(f"{redis_namespace}*")) == before
    assert await mm.cancel(t.ticket, "alice") is True
    assert await mm.cancel(t.ticket, "alice") is True  # again: a no-op
    info = await mm.ticket(t.ticket)
    assert info is not None and info.state == "cancelled"
    assert await mm.status("standard-5") == (0, 0)
    # a cancelled ticket is never matched; the player may queue again
    for i in range(4):
        await mm.enqueue(f"x{i}", "standard-5")
    await mm.enqueue("alice", "standard", 5)
    (formed,) = await mm.tick()
    assert t.ticket not in formed.tickets


async def test_bot_backfill_after_the_wait(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(0)
    mm = make(redis_client, redis_namespace, clock, ttl=60_000)
    lone = await mm.enqueue("solo", "standard-6")
    clock.advance(19_000)
    assert await mm.tick() == []  # min_humans = 2: one human never gets a bot table
    pair = await mm.enqueue("duo", "standard-6")
    assert await mm.tick() == []  # the wait is not over yet
    clock.advance(1_000)
    (formed,) = await mm.tick()  # solo waited 20 s: bots fill the 4 empty seats
    assert set(formed.tickets) == {lone.ticket, pair.ticket}
    assert sum(s.bot for s in formed.seats) == 4
    assert [s.player for s in formed.seats if not s.bot].count("solo") == 1
    match = (await matches(redis_client, redis_namespace))[0]
    assert sum(s.bot for s in match.seats) == 4
    assert len(match.tokens) == 2


async def test_close_ratings_first_window_widens(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(0)
    mm = make(redis_client, redis_namespace, clock, ttl=600_000)
    # ratings straight into the queue: two clusters 10 mu apart
    low = [await mm.enqueue(f"low{i}", "standard-4") for i in range(3)]
    high = [await mm.enqueue(f"high{i}", "standard-4") for i in range(3)]
    for i, t in enumerate(low + high):
        await redis_client.zadd(
            f"{redis_namespace}:{{mm}}:q:standard-4",
            {t.ticket: (20.0 if i < 3 else 30.0) + i * 0.1},
        )
    extra = await mm.enqueue("low3", "standard-4")
    await redis_client.zadd(f"{redis_namespace}:{{mm}}:q:standard-4", {extra.ticket: 20.5})
    (formed,) = await mm.tick()  # the low four are within 3 mu; the highs wait
    assert set(formed.tickets) == {t.ticket for t in low} | {extra.ticket}
    late = await mm.enqueue("mid", "standard-4")
    await redis_client.zadd(f"{redis_namespace}:{{mm}}:q:standard-4", {late.ticket: 24.0})
    assert await mm.tick() == []  # 6+ mu from the highs: too far for now
    clock.advance(10_000)  # windows widen by 1 mu/s
    (formed,) = await mm.tick()
    assert set(formed.tickets) == {t.ticket for t in high} | {late.ticket}


async def test_an_idle_tick_reads_no_queue_and_the_next_ticket_is_matched(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    clock = ManualClock(0)
    mm = make(redis_client, redis_namespace, clock)
    asked: list[int] = []
    full = mm.waiting

    async def waiting(*args: object, **kwargs: object) -> object:
        asked.append(1)
        return await full(*args, **kwargs)  # type: ignore[arg-type]

    mm.waiting = waiting  # type: ignore[method-assign]
    for _ in range(3):
        assert await mm.tick() == []
    assert asked == []  # nobody queued, no table open: no mode's queues read
    depth = mm.metrics.queue_depth
    assert depth.labels("standard-5")._value.get() == 0  # the depths still say so
    tickets = [await mm.enqueue(f"p{i}", "standard-5") for i in range(5)]
    (formed,) = await mm.tick()  # the very next tick
    assert set(formed.tickets) == {t.ticket for t in tickets} and asked == [1]
    assert await mm.tick() == [] and asked == [1]  # all matched: idle again
    # a ticket that expires is still expired by an idle-looking tick (its expiry is due)
    late = await mm.enqueue("late", "standard-8")
    clock.advance(10_001)
    assert await mm.tick() == []
    info = await mm.ticket(late.ticket)
    assert info is not None and info.state == "expired"


async def test_a_quiet_matchmaker_waits_for_a_ticket_not_the_idle_interval(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    mm = make(redis_client, redis_namespace, ManualClock(0))
    assert await mm.tick() == [] and mm.quiet
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    waiting = asyncio.create_task(mm.quiet_wait(30))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # quiet: waits on
    p0 = await mm.enqueue("p0", "standard-5")
    await asyncio.wait_for(waiting, 5)  # the ticket ends the wait
    assert loop.time() - t0 < 5
    assert await mm.tick() == [] and not mm.quiet  # one queued: the usual interval
    await asyncio.wait_for(mm.quiet_wait(30), 1)  # at once
    await mm.cancel(p0.ticket, "p0")
    assert await mm.tick() == [] and mm.quiet
    await mm.enqueue("p1", "standard-5")  # after the quiet tick, before its wait
    await asyncio.wait_for(mm.quiet_wait(30), 1)  # ends at once: the next tick sees it
