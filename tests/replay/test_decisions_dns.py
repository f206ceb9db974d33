"""The web server's spectator lookups and tournament sizing over engines behind one DNS name
(#43 loose end). Compose and Kubernetes name every engine by one name (`engine:50051`): the
live table's pending-decision lookups (services/replay/decisions.py) went on one channel to it,
so to one engine, and a tournament made in the browser counted the name as one engine. Now both
resolve the name (services/targets.py; here a resolver with a fixed answer: fake engines on
loopback ports)."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

from services.play.web import CountingHost
from services.replay.decisions import EngineDecisions
from services.targets import Targets
from services.tournaments.spec import Spec
from tests.fake_engines import fake_engines, fixed

GAMES = [f"g{k}" for k in range(40)]


async def test_lookups_go_to_every_engine_of_the_name_by_the_games_hash() -> None:
    async with fake_engines(2) as (a, b):
        decisions = EngineDecisions(
            "engine:50051", resolver=fixed({"engine": [a.address, b.address]})
        )
        try:
            for g in GAMES:
                assert await decisions.pending(g) is None  # (the fake has none pending)
        finally:
            await decisions.close()
        # each game on one engine, the one the play API and the bot workers use for it
        assert not set(a.calls) & set(b.calls)
        assert {g: int(g in b.calls) for g in GAMES} == {
            g: zlib.crc32(g.encode()) % 2 for g in GAMES
        }
        assert 10 <= len(a.calls) <= 30 and 10 <= len(b.calls) <= 30


async def test_a_gone_engine_is_passed_over_and_the_name_resolved_again() -> None:
    async with fake_engines(2) as (a, b):
        answers = {"engine": [a.address, b.address]}
        decisions = EngineDecisions(["engine:50051"], 1.0, resolver=fixed(answers))
        decisions.targets.retry_s = 0.0
        try:
            game = next(g for g in GAMES if zlib.crc32(g.encode()) % 2 == 0)  # a's game
            await decisions.pending(game)
            assert a.calls[game] == 1
            await a.server.stop(grace=None)
            answers["engine"] = [b.address]
            await decisions.pending(game)  # a refuses: b answers
            assert b.calls[game] == 1
            await decisions.pending(game)  # resolved again: b alone
            assert decisions.targets.current() == [b.address]
            assert list(decisions.channels) == [b.address]
        finally:
            await decisions.close()


async def test_a_plain_address_still_works() -> None:
    async with fake_engines(1) as (a,):
        decisions = EngineDecisions(a.address)
        try:
            assert await decisions.pending("g1") is None
        finally:
            await decisions.close()
        assert a.calls["g1"] == 1


async def test_a_tournament_counts_the_engines_the_name_resolves_to(tmp_path: Path) -> None:
    answers = {"engine": ["10.0.0.1:50051", "10.0.0.2:50051", "10.0.0.3:50051"]}
    targets = Targets(["engine:50051"], fixed(answers), every_s=0.0)
    none: Any = None  # (counting needs no Play nor accounts)
    host = CountingHost(none, none, tmp_path, targets, b"s" * 32)
    bots = Spec(ruleset="standard", players=5, games=10, policies=["random"])
    assert host.concurrency(bots, 0) == host.concurrency(bots, 1)  # unresolved: the name is one
    assert await host.count() == 3
    assert host.concurrency(bots, 0) == 3 * host.concurrency(bots, 1)
    assert host.concurrency(bots, 2) == 2 * host.concurrency(bots, 1)  # the organiser's cap
    answers["engine"] = ["10.0.0.2:50051"]  # scaled down
    assert await host.count() == 1
    del answers["engine"]  # no longer resolves: its last answer is kept
    assert await host.count() == 1
