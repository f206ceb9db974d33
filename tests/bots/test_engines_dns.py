"""The bot worker's engines behind one DNS name (#43 loose end, services/bots/engines.py). Given
compose's `engine:50051` as one gRPC target, a bot worker held one bot session, to one engine,
and sent it every answer; the other engines pushed to nobody. Now the name stands for every
engine it resolves to (a resolver with a fixed answer here: engines on loopback ports): a
session to each, each game's answers to one of them by the hash of its id, and a new set of
engines taken up when the name's answer changes."""

from __future__ import annotations

import asyncio
import contextlib
import time
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import redis.asyncio as aioredis

from services.bots.cluster import archived, publish_matches, spawn_bots, start_engines, stop
from services.bots.engine_client import GrpcEngine
from services.bots.engines import Engines, engines
from services.targets import Targets
from services.verify import verify
from tests.fake_engines import FakeEngine, fake_engines, fixed

GAMES = [f"g{k}" for k in range(40)]


async def _key() -> str:
    return "bot-key"


async def _nothing_pushed(engine: int, batch: object) -> None:
    return None


@contextlib.asynccontextmanager
async def _running(e: Engines, sessions: bool = True) -> AsyncIterator[Engines]:
    task = asyncio.create_task(e.run(_nothing_pushed if sessions else None, _key, check_s=0.05))
    try:
        yield e
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await e.close()


async def _until(check: object, what: str) -> None:
    for _ in range(200):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.02)
    raise AssertionError(what)


def _make(targets: list[str]) -> GrpcEngine:
    return GrpcEngine(targets, 5.0, name="b0")


async def _answer_all(e: Engines, games: list[str]) -> None:
    results = await asyncio.gather(*(e.submit(g, "t", 1, ["x"]) for g in games))
    assert all(r.version == 1 for r in results)


def _games(fake: FakeEngine) -> set[str]:
    return set(fake.calls)


async def test_one_target_for_a_names_addresses_is_one_session_and_every_answer() -> None:
    """The problem: one channel whose one target has both engines' addresses (what a DNS name is
    to gRPC; its `ipv4:` list stands in for the name) opens one session and takes every answer."""
    async with fake_engines(2) as (a, b):
        one = _make([f"ipv4:127.0.0.1:{a.port},127.0.0.1:{b.port}"])
        sessions = asyncio.create_task(one.run_sessions(_nothing_pushed, _key))
        try:
            await _until(lambda: a.sessions or b.sessions, "no session")
            results = await asyncio.gather(*(one.submit(g, "t", 1, ["x"]) for g in GAMES))
            assert len(results) == len(GAMES)
        finally:
            sessions.cancel()
            await one.close()
        assert sorted([len(a.sessions), len(b.sessions)]) == [0, 1]
        assert sorted([len(a.calls), len(b.calls)]) == [0, len(GAMES)]


async def test_a_name_is_a_session_to_every_engine_and_answers_spread_by_game() -> None:
    async with fake_engines(2) as (a, b):
        targets = Targets(["engine:50051"], fixed({"engine": [a.address, b.address]}))
        e = await engines(["engine:50051"], _make, name="b0", targets=targets)
        assert e.addresses == [a.address, b.address]
        async with _running(e):
            await _until(lambda: a.open_sessions and b.open_sessions, "a session to each")
            await _answer_all(e, GAMES)
            assert e.session_counts()[0] == len(GAMES)  # on the sessions, not in calls
        assert a.sessions == b.sessions == ["b0"]
        assert _games(a) == {g for g in GAMES if zlib.crc32(g.encode()) % 2 == 0}
        assert _games(b) == {g for g in GAMES if zlib.crc32(g.encode()) % 2 == 1}


async def test_engines_that_come_and_go_are_taken_up() -> None:
    async with fake_engines(3) as (a, b, c):
        answers = {"engine": [a.address, b.address]}
        said: list[str] = []
        targets = Targets(["engine:50051"], fixed(answers), every_s=0.1)
        e = await engines(["engine:50051"], _make, name="b0", targets=targets, say=said.append)
        async with _running(e, sessions=False):  # answers in SubmitActions calls
            await _answer_all(e, GAMES[:20])
            answers["engine"] = [b.address, c.address]  # a scaled away, c added
            await _until(lambda: e.addresses == [b.address, c.address], "c taken up")
            await _answer_all(e, GAMES[20:])
            assert e.submitted() == (len(GAMES), e.submitted()[1])  # the old engine's count
        assert said == [
            f"arena bots b0: engines now {b.address}, {c.address} (were {a.address}, {b.address})"
        ]
        assert not _games(a) & set(GAMES[20:])
        assert _games(c) == {g for g in GAMES[20:] if zlib.crc32(g.encode()) % 2 == 1}


async def test_sessions_move_with_the_engines() -> None:
    async with fake_engines(3) as (a, b, c):
        answers = {"engine": [a.address, b.address]}
        targets = Targets(["engine:50051"], fixed(answers), every_s=0.1)
        e = await engines(["engine:50051"], _make, name="b0", targets=targets, say=lambda _: None)
        e.grace_s = 0.05
        async with _running(e):
            await _until(lambda: a.open_sessions and b.open_sessions, "a session to a and b")
            answers["engine"] = [c.address]
            await _until(lambda: c.open_sessions == 1, "a session to c")
            await _until(lambda: not a.open_sessions and not b.open_sessions, "a, b ended")
            await _answer_all(e, GAMES)
        assert _games(c) == set(GAMES)


async def test_a_plain_list_is_never_resolved() -> None:
    async with fake_engines(2) as (a, b):
        asked: list[str] = []

        async def resolver(host: str, port: int) -> list[str]:
            asked.append(host)
            return []

        targets = Targets([a.address, b.address], resolver)
        e = await engines([a.address, b.address], _make, targets=targets)
        async with _running(e):
            await _until(lambda: a.open_sessions and b.open_sessions, "a session to each")
            await _answer_all(e, GAMES)
        assert not asked and e.swaps == 0
        assert _games(a) == {g for g in GAMES if zlib.crc32(g.encode()) % 2 == 0}


async def test_a_bot_worker_given_a_name_plays_through_real_engines(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    """`arena bots --engine localhost:PORT` (a name, resolved by the system's resolver to
    127.0.0.1) against a real engine: games played to the end on the bot session, archived and
    verified."""
    ns, archive = redis_namespace, tmp_path / "archive"
    [(engine, port)] = start_engines(redis_url, ns, 1, archive)
    bots = spawn_bots(redis_url, ns, "b0", [port], extra=("--engine", f"localhost:{port}"))
    procs = [engine, bots]
    try:
        assert bots.stdout is not None and '"consumer"' in bots.stdout.readline()  # consuming
        await publish_matches(redis_client, ns, 2, 4, ["random"], seed=700)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(archived(archive)) < 2:
            await asyncio.sleep(0.2)
        files = archived(archive)
        assert len(files) == 2 and all(verify(f).ok for f in files)
    finally:
        lines = stop(procs)
    worker = next(line for line in lines if line.get("consumer") == "b0" and "batched" in line)
    assert worker["batched"]["session_answers"] > 0, worker  # on the session to 127.0.0.1
