"""Two real `arena matchmaker` processes on one Redis, 200 tickets across modes: every ticket ends
in exactly one published match or expires; no table is published twice."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis.asyncio as aioredis
from process_helpers import arena, clean_env

from services.contracts.streams import NewMatch, decode
from services.proto_gen.arena.v1 import matchmaker_pb2 as pb
from services.proto_gen.arena.v1 import matchmaker_pb2_grpc
from services.rpc_guard import signed_channel

SECRET = "two-procs-" + "x" * 32

SIZES = {"standard-4": 33, "standard-5": 52, "standard-8": 41, "honglou-10": 43, "standard-6": 31}


@pytest.fixture
def matchmakers(redis_url: str, redis_namespace: str) -> Iterator[list[int]]:
    procs = [
        arena(
            "matchmaker",
            *("--redis-url", redis_url, "--namespace", redis_namespace, "--port", "0"),
            *("--tick-ms", "20", "--bot-after-ms", "0", "--consumer", f"mm{i}"),
            # no ticket expires during the test, however slow the machine
            *("--ticket-ttl-ms", "600000"),
            env={**clean_env(), "ARENA_SECRET": SECRET},
            stdout=subprocess.PIPE,
        )
        for i in range(2)
    ]
    try:
        ports = [json.loads(p.stdout.readline())["port"] for p in procs]  # type: ignore[union-attr]
        yield ports
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(10)


async def test_two_processes_200_tickets(
    matchmakers: list[int], redis_url: str, redis_namespace: str, redis_client: aioredis.Redis
) -> None:
    channels = [signed_channel(f"127.0.0.1:{p}", SECRET.encode()) for p in matchmakers]
    stubs = [matchmaker_pb2_grpc.MatchmakerStub(c) for c in channels]
    plan = [(mode, i) for mode, n in SIZES.items() for i in range(n)]
    tickets: dict[str, pb.Ticket] = {}

    async def enqueue(k: int, mode: str, i: int) -> None:
        t = await stubs[k % 2].Enqueue(pb.EnqueueRequest(player=f"{mode}.{i}", mode=mode))
        tickets[t.ticket_id] = t

    await asyncio.gather(*(enqueue(k, m, i) for k, (m, i) in enumerate(plan)))
    assert len(tickets) == 200
    prefix = f"{redis_namespace}:{{mm}}:t:"
    full = {mode: n - n % int(mode.rsplit("-", 1)[1]) for mode, n in SIZES.items()}

    def matched(mode: str) -> int:
        return sum(states[t] == "matched" for t, tk in tickets.items() if tk.mode == mode)

    deadline = time.monotonic() + 60
    while True:  # until every full table has formed; the rest of each mode stays queued
        states = {
            t: (await redis_client.hget(prefix + t, "state") or b"").decode() for t in tickets
        }
        if all(matched(m) >= n for m, n in full.items()) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert set(states.values()) <= {"matched", "queued"}, states
    games: dict[str, list[str]] = {}
    for _, fields in await redis_client.xrange(f"{redis_namespace}:{{mm}}:matches"):
        match = decode(fields, NewMatch)
        assert match.match_id not in games, "a table was published twice"
        games[match.match_id] = [s.player for s in match.seats if not s.bot]
    seated = [p for players in games.values() for p in players]
    assert len(seated) == len(set(seated)), "a player sits in two games"
    for tid, t in tickets.items():
        game = (await redis_client.hget(prefix + tid, "game") or b"").decode()
        if states[tid] == "matched":
            assert t.player in games[game]
        else:
            assert t.player not in seated
    assert len(seated) == sum(states[t] == "matched" for t in tickets)
    assert {m: matched(m) for m in full} == full  # with one rating, every full table forms
    for c in channels:
        await c.close()
