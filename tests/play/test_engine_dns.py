"""The web server's engines behind one DNS name (#43 loose end). Compose and Kubernetes give the
web server the engines as one name (`engine:50051`) that resolves to every engine container or
pod; as one gRPC target, gRPC's pick_first sent every person's answer, 托管 and decision to one
of them while the others idled. Now `Engine` resolves the name itself (services/targets.py;
here a resolver with a fixed answer: two engines on loopback ports), one channel per engine,
and each game's calls go to one of them by the hash of its id, as with a plain list."""

from __future__ import annotations

import asyncio
import zlib

from services.play.clients import Engine
from tests.fake_engines import FakeEngine, fake_engines, fixed

GAMES = [f"g{k}" for k in range(40)]


async def _play(engine: Engine, games: list[str]) -> None:
    """A game's worth of calls for each game: its decision, an answer, 托管 on and off."""
    for g in games:
        await engine.decision(g, "t")
        await engine.submit(g, "t", 1, ["x"])
        await engine.set_hosted(g, "t", True)
        await engine.set_hosted(g, "t", False)


def _where(engines: list[FakeEngine]) -> dict[str, int]:
    """Each game's engine (index); fails if a game's calls went to more than one."""
    out: dict[str, int] = {}
    for i, e in enumerate(engines):
        for g in e.calls:
            assert g not in out, f"{g}'s calls went to engines {out[g]} and {i}"
            out[g] = i
    return out


async def test_one_target_for_a_names_addresses_sends_every_call_to_one_engine() -> None:
    """The problem, as gRPC has it: a channel whose one target has two addresses (what a DNS name
    of two engines is to it; gRPC's `ipv4:` list stands in for the name) uses one of them."""
    async with fake_engines(2) as (a, b):
        engine = Engine([f"ipv4:127.0.0.1:{a.port},127.0.0.1:{b.port}"])
        try:
            await _play(engine, GAMES)
        finally:
            await engine.close()
        busy = sorted([sum(a.calls.values()), sum(b.calls.values())])
        assert busy == [0, 4 * len(GAMES)]


async def test_a_name_stands_for_every_engine_it_resolves_to() -> None:
    async with fake_engines(2) as (a, b):
        answers = {"engine": [a.address, b.address]}
        engine = Engine(["engine:50051"], resolver=fixed(answers))
        try:
            await _play(engine, GAMES)
            assert engine.addresses == [a.address, b.address]
        finally:
            await engine.close()
        where = _where([a, b])
        assert sorted(where) == sorted(GAMES)
        assert all(a.calls[g] == 4 for g in where if where[g] == 0)  # a game's worth each
        # the hash over the name's addresses, as the bot workers pick (engine_client.py)
        assert where == {g: zlib.crc32(g.encode()) % 2 for g in GAMES}
        assert 10 <= len(a.calls) <= 30 and 10 <= len(b.calls) <= 30


async def test_the_name_is_resolved_again_as_engines_come_and_go() -> None:
    async with fake_engines(3) as (a, b, c):
        answers = {"engine": [a.address, b.address]}
        engine = Engine(["engine:50051"], resolver=fixed(answers), resolve_every_s=0.1)
        try:
            await _play(engine, GAMES[:20])
            answers["engine"] = [b.address, c.address]  # a scaled away, c added
            await asyncio.sleep(0.15)
            await engine.decision("wake", "t")  # a call when due starts the new resolution
            for _ in range(100):
                if engine.addresses == [b.address, c.address]:
                    break
                await asyncio.sleep(0.02)
            assert engine.addresses == [b.address, c.address]
            before = sum(a.calls.values())
            await _play(engine, GAMES[20:])
        finally:
            await engine.close()
        assert sum(a.calls.values()) == before  # none after it left
        assert {g for g in c.calls if g != "wake"} == {
            g for g in GAMES[20:] if zlib.crc32(g.encode()) % 2 == 1
        }


async def test_a_worker_gone_has_the_name_resolved_again_at_once() -> None:
    """An engine that stops answering: its games' calls go to the next engine (as before), and
    the name is resolved again at the next call, not 30 s later."""
    async with fake_engines(2) as (a, b):
        answers = {"engine": [a.address, b.address]}
        engine = Engine(["engine:50051"], resolver=fixed(answers), try_s=1.0)
        engine.targets.retry_s = 0.05
        try:
            await engine.decision("g0", "t")  # resolved: both engines
            await a.server.stop(grace=None)
            answers["engine"] = [b.address]
            game = next(g for g in GAMES if zlib.crc32(g.encode()) % 2 == 0)  # a's game
            await engine.submit(game, "t", 1, ["x"])  # a refuses: b takes it
            assert b.calls[game] == 1
            await asyncio.sleep(0.06)
            await engine.decision(game, "t")
            for _ in range(100):
                if engine.addresses == [b.address]:
                    break
                await asyncio.sleep(0.02)
            assert engine.addresses == [b.address]
        finally:
            await engine.close()


async def test_a_plain_list_is_used_as_it_is() -> None:
    async with fake_engines(2) as (a, b):
        engine = Engine([b.address, a.address], resolver=fixed({}))
        try:
            await _play(engine, GAMES)
            assert engine.addresses == [b.address, a.address]
        finally:
            await engine.close()
        assert _where([b, a]) == {g: zlib.crc32(g.encode()) % 2 for g in GAMES}
