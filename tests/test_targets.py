"""An address list where a DNS name stands for every address it resolves to (services/targets.py):
what is resolved and what is left as it is, the order every process agrees on, and what a name
that does not resolve stands for."""

from __future__ import annotations

import argparse
import asyncio
import time
import zlib

import pytest

from services.cliargs import address_list
from services.targets import Targets, host_port, is_name, parse_list, resolve_dns, route
from tests.fake_engines import fixed


def test_names_and_addresses_are_told_apart() -> None:
    assert host_port("engine:50051") == ("engine", 50051)
    assert host_port("[fd00::2]:50051") == ("fd00::2", 50051)
    assert host_port("engine") is None and host_port("engine:0") is None
    assert host_port("engine:70000") is None and host_port("unix:/run/e.sock") is None
    assert is_name("engine:50051") and is_name("arena-engine.arena.svc.cluster.local:50051")
    assert not is_name("127.0.0.1:50051") and not is_name("[::1]:50051")
    assert not is_name("unix:/run/e.sock") and not is_name("dns:///engine:50051")


def test_a_bad_list_is_one_line() -> None:
    assert parse_list(" engine:50051, 127.0.0.1:1 ,") == ["engine:50051", "127.0.0.1:1"]
    assert parse_list("unix:/run/e.sock") == ["unix:/run/e.sock"]
    for bad, said in (
        ("", "no address"),
        (",", "no address"),
        ("engine", "'engine' is no HOST:PORT"),
        ("engine:99999", "'engine:99999' is no HOST:PORT"),
        ("engine:50051,http://x", "'http://x' is no HOST:PORT"),
    ):
        with pytest.raises(argparse.ArgumentTypeError, match=said):
            address_list(bad)


async def test_a_plain_list_is_used_as_it_is() -> None:
    t = Targets(["127.0.0.1:2", "127.0.0.1:1", "[::1]:3"], fixed({}))
    assert not t.dynamic and not t.due()
    assert t.current() == ["127.0.0.1:2", "127.0.0.1:1", "[::1]:3"]
    assert not await t.refresh()


async def test_a_name_stands_for_its_addresses_in_place_each_once() -> None:
    answers = {"engine": ["10.0.0.5:50051", "10.0.0.7:50051"]}
    t = Targets(["10.0.0.7:50051", "engine:50051", "127.0.0.1:9"], fixed(answers))
    assert t.dynamic and t.due() and not t.resolved
    assert t.current() == ["10.0.0.7:50051", "engine:50051", "127.0.0.1:9"]  # not yet resolved
    assert await t.refresh()
    assert t.resolved and not t.due()
    assert t.current() == ["10.0.0.7:50051", "10.0.0.5:50051", "127.0.0.1:9"]
    assert not await t.refresh()  # same answer: nothing changed


async def test_a_name_that_stops_resolving_keeps_its_last_addresses_and_is_tried_sooner() -> None:
    said: list[str] = []
    answers = {"engine": ["10.0.0.5:50051"]}
    t = Targets(["engine:50051"], fixed(answers), every_s=30, retry_s=0.05, say=said.append)
    await t.refresh()
    assert t.next_at - t.last == pytest.approx(30)
    del answers["engine"]
    assert not await t.refresh()
    assert t.current() == ["10.0.0.5:50051"]
    assert t.next_at - t.last == pytest.approx(0.05)  # failing: again after retry_s
    await t.refresh()
    assert len(said) == 1 and "engine:50051 does not resolve" in said[0]  # said once
    assert "using 10.0.0.5:50051" in said[0]
    answers["engine"] = ["10.0.0.6:50051", "10.0.0.5:50051"]
    assert await t.refresh()
    assert t.current() == ["10.0.0.6:50051", "10.0.0.5:50051"]
    assert said[1] == "engine:50051 resolves again: 10.0.0.6:50051, 10.0.0.5:50051"


async def test_a_name_never_resolved_stands_for_itself() -> None:
    said: list[str] = []
    t = Targets(["engine:50051"], fixed({}), say=said.append)
    assert not await t.refresh()
    assert t.current() == ["engine:50051"]  # one target: gRPC resolves it on its own, as before
    assert "using engine:50051 itself" in said[0]


async def test_a_failed_call_brings_the_next_resolution_forward() -> None:
    t = Targets(["engine:50051"], fixed({"engine": ["10.0.0.5:1"]}), every_s=30, retry_s=0.05)
    await t.refresh()
    assert not t.due()
    t.soon()
    await asyncio.sleep(0.06)
    assert t.due()


async def test_a_resolver_that_hangs_is_given_up_on() -> None:
    async def hangs(host: str, port: int) -> list[str]:
        await asyncio.sleep(60)
        return []

    said: list[str] = []
    t = Targets(["engine:50051"], hangs, timeout_s=0.05, say=said.append)
    start = time.monotonic()
    assert not await t.refresh()
    assert time.monotonic() - start < 5
    assert "no answer in 0 s" in said[0]


async def test_the_systems_resolver_gives_one_family_sorted() -> None:
    # localhost has 127.0.0.1 (and often ::1): one engine, so the IPv4 address alone
    assert await resolve_dns("localhost", 50051) == ["127.0.0.1:50051"]
    assert await resolve_dns("127.0.0.2", 1) == ["127.0.0.2:1"]
    with pytest.raises(OSError):
        await resolve_dns("no-such-host.invalid", 1)


async def test_the_peoples_engines_names_stand_for_their_addresses() -> None:
    """`of`: what some of the entries (the people's engines') stand for now, as `current`."""
    answers = {"engine": ["10.0.0.5:50051", "10.0.0.7:50051"], "people": ["10.0.0.9:50051"]}
    t = Targets(["engine:50051", "people:50051"], fixed(answers))
    assert t.of(["people:50051"]) == ["people:50051"]  # not yet resolved: itself
    await t.refresh()
    assert t.of(["people:50051"]) == ["10.0.0.9:50051"]
    assert t.of([]) == [] and t.of(["engine:50051"]) == ["10.0.0.5:50051", "10.0.0.7:50051"]


def test_a_game_goes_to_the_engines_of_its_kind_first() -> None:
    """`route`: a person's game to the people's engines, a bot-only one to the others, each
    by the hash among them, then the other kind's; with none of a kind, every engine; with no
    people's engines, the hash over all as before (CRC-32 mod n, then the next ones)."""
    games = [f"g{k}" for k in range(40)]
    for g in games:
        assert route(g, 3) == [(zlib.crc32(g.encode()) % 3 + k) % 3 for k in range(3)]
        assert route(g, 3, (), person=True) == route(g, 3)
        assert route(g, 4, [3], person=True)[0] == 3
        assert sorted(route(g, 4, [3], person=True)[1:]) == [0, 1, 2]
        assert route(g, 4, [3])[:3] == route(g, 3) and route(g, 4, [3])[3] == 3
        assert route(g, 2, [0, 1]) == route(g, 2, [0, 1], person=True)  # all people's
    assert {route(g, 4, [2, 3], person=True)[0] for g in games} == {2, 3}  # spread by the hash
