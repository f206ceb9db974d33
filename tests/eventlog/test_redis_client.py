"""`connect()` and `HiredisPackConnection`: the same bytes as redis-py's own packing, the same
errors for what redis-py refuses, and a working client against a real Redis."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError, DataError, ResponseError

from services.redisinfra.redis_client import HiredisPackConnection, WaitingConnectionPool, connect
from services.redisinfra.server import RedisServer

BIG = bytes(range(256)) * 1024  # 256 KiB: above redis-py's buffer cutoff, so stock chunks it

COMMANDS: list[tuple[object, ...]] = [
    ("PING",),
    ("SET", "key", "value"),
    ("SET", b"key", b"value"),
    ("SET", "k", 0),
    ("SET", "k", -17),
    ("SET", "k", 2**64 + 3),
    ("SET", "k", 1.5),
    ("SET", "k", 0.1),
    ("SET", "k", 1e20),
    ("SET", "k", 1e-7),
    ("SET", "k", -0.0),
    ("SET", "k", float("inf")),
    ("SET", "k", 1 / 3),
    ("SET", "k", memoryview(b"view")),
    ("SET", bytearray(b"ba-key"), bytearray(b"ba-value")),
    ("SET", "ключ", "值 — ✓"),
    ("CONFIG GET", "maxmemory"),
    (b"CONFIG GET", b"maxmemory"),
    ("CLIENT  SETNAME", "x"),  # two spaces: split like str.split()
    ("SET", "k", b""),
    ("SET", "k", ""),
    ("SET", "", b""),
    ("SET", "big", BIG),
    ("SET", "bigview", memoryview(BIG)),
    ("XADD", "s", "*", "e", b"\x00\r\n\xff", "t", 1234567890123),
    ("EVALSHA", "a" * 40, 2, "k1", "k2", 7, b"raw", "text", 2.25),
    ("ZADD", "z", 1700000000000, "game|3"),
]


def _stock(*args: object) -> bytes:
    return b"".join(bytes(c) for c in aioredis.Connection().pack_command(*args))  # type: ignore[arg-type]


def _hiredis(*args: object) -> bytes:
    return b"".join(bytes(c) for c in HiredisPackConnection().pack_command(*args))  # type: ignore[arg-type]


def _stable_id(value: object) -> str:
    """A test id that is the same in every process (no memory addresses), for pytest-xdist."""
    if isinstance(value, tuple):
        return "(" + ", ".join(_stable_id(v) for v in value) + ")"
    if isinstance(value, memoryview):
        return f"memoryview({len(value)})"
    if type(value) is object:
        return "object()"
    return repr(value)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: _stable_id(a)[:40])
def test_pack_command_same_bytes_as_redis_py(args: tuple[object, ...]) -> None:
    assert _hiredis(*args) == _stock(*args)


def test_pack_commands_same_bytes_as_redis_py() -> None:
    stock = b"".join(bytes(c) for c in aioredis.Connection().pack_commands(COMMANDS))  # type: ignore[arg-type]
    ours = b"".join(HiredisPackConnection().pack_commands(COMMANDS))  # type: ignore[arg-type]
    assert ours == stock


@pytest.mark.parametrize("bad", [True, False, None, object(), [1]], ids=_stable_id)
def test_unencodable_arguments_raise_data_error(bad: object) -> None:
    with pytest.raises(DataError):
        aioredis.Connection().pack_command("SET", "k", bad)  # type: ignore[arg-type]
    with pytest.raises(DataError):
        HiredisPackConnection().pack_command("SET", "k", bad)  # type: ignore[arg-type]


async def test_connect_honours_the_client_encoding(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis
) -> None:
    """BUG: HiredisPackConnection ignores the connection's `encoding` / `encoding_errors`
    (`connect(url, encoding=...)` passes them to every connection): it always packs str as
    strict UTF-8, where redis-py encodes with the connection's encoder. The module promises the
    same bytes as redis-py and "everything else is stock redis-py"; here a latin-1 client
    stores 'é' as the 2 UTF-8 bytes C3 A9 instead of the 1 latin-1 byte E9."""
    args = ("SET", "k", "café")
    stock = b"".join(aioredis.Connection(encoding="latin-1").pack_command(*args))
    assert stock.endswith(b"$4\r\ncaf\xe9\r\n")
    key = f"{redis_namespace}:latin1"
    client = connect(redis_url, encoding="latin-1")
    try:
        await client.set(key, "café")
    finally:
        await client.aclose()
    stored = await redis_client.get(key)  # raw bytes, no decoding
    assert stored == b"caf\xe9", f"connect(encoding='latin-1') stored {stored!r}"


async def test_connect_round_trips_against_redis(redis_url: str, redis_namespace: str) -> None:
    ns = redis_namespace
    client = connect(redis_url)
    try:
        assert client.connection_pool.connection_class is HiredisPackConnection
        assert await client.ping() is True
        assert await client.set(f"{ns}:k", "значение ✓") is True
        assert (await client.get(f"{ns}:k")).decode() == "значение ✓"
        await client.set(f"{ns}:big", BIG)
        assert await client.get(f"{ns}:big") == BIG
        await client.set(f"{ns}:n", 5)
        assert await client.incrbyfloat(f"{ns}:n", 0.5) == 5.5
        sid = await client.xadd(f"{ns}:s", {"e": b"\x00\xff", "n": 3})
        rows = await client.xrange(f"{ns}:s")
        assert rows == [(sid, {b"e": b"\x00\xff", b"n": b"3"})]
        reply = await client.eval(
            "return {KEYS[1], ARGV[1], tonumber(ARGV[2]) + 1}", 1, f"{ns}:x", b"raw", 41
        )
        assert reply == [f"{ns}:x".encode(), b"raw", 42]
        with pytest.raises(ResponseError):  # errors still come back as redis-py raises them
            await client.incr(f"{ns}:k")
        async with client.pipeline(transaction=False) as pipe:  # pack_commands
            pipe.set(f"{ns}:p1", "a").get(f"{ns}:p1").get(f"{ns}:big").delete(f"{ns}:p1")
            assert await pipe.execute() == [True, b"a", BIG, 1]
        with pytest.raises(DataError):
            await client.set(f"{ns}:bad", None)  # type: ignore[arg-type]
        assert await client.ping() is True  # the refused command did not break the connection
    finally:
        await client.delete(f"{ns}:k", f"{ns}:big", f"{ns}:n", f"{ns}:s")
        pool = client.connection_pool
        await client.aclose()
    assert all(not c.is_connected for c in pool._available_connections)  # type: ignore[attr-defined]
    assert not pool._in_use_connections  # type: ignore[attr-defined]


async def test_connect_other_schemes_use_stock_connections() -> None:
    client = connect("unix:///nonexistent/redis.sock")  # no connection is made until a command
    assert client.connection_pool.connection_class is not HiredisPackConnection
    await client.aclose()


async def test_more_commands_than_connections_wait_for_one(
    redis_url: str, redis_namespace: str
) -> None:
    """redis-py 8's plain asyncio pool raised "Too many connections" for the command beyond
    `max_connections`; connect()'s pool makes it wait for a connection instead, and refuses
    only after `pool_timeout` (with redis-py's ConnectionError, an outage to callers)."""
    key = f"{redis_namespace}:blocked"
    client = connect(redis_url, max_connections=2)
    try:
        assert isinstance(client.connection_pool, WaitingConnectionPool)
        # 10 commands at once over 2 connections: each BLPOP holds its connection until an
        # RPUSH (on another client) wakes it, so most must wait for a connection
        waiting = [asyncio.ensure_future(client.blpop([key], timeout=0)) for _ in range(10)]
        other = connect(redis_url)
        try:
            for _ in range(10):
                await other.rpush(key, "x")
            popped = await asyncio.wait_for(asyncio.gather(*waiting), 30)
        finally:
            await other.aclose()
        assert len(popped) == 10
        assert await client.llen(key) == 0
    finally:
        await client.aclose()
    impatient = connect(redis_url, max_connections=1, pool_timeout=0.2)
    other = connect(redis_url)
    try:
        held = asyncio.ensure_future(impatient.blpop([key], timeout=0))
        while not impatient.connection_pool._in_use_connections:  # type: ignore[attr-defined]
            await asyncio.sleep(0)  # the BLPOP has taken the one connection
        with pytest.raises(ConnectionError, match="No connection available"):
            await impatient.ping()
        await other.rpush(key, "y")
        assert tuple(await asyncio.wait_for(held, 30)) == (key.encode(), b"y")
        assert await impatient.ping() is True  # the refusal changed nothing
    finally:
        await other.aclose()
        await impatient.aclose()


async def test_a_cancelled_waiter_does_not_hold_up_the_next(
    redis_url: str, redis_namespace: str
) -> None:
    key = f"{redis_namespace}:cancelled"
    client = connect(redis_url, max_connections=1, pool_timeout=None)
    other = connect(redis_url)
    try:
        held = asyncio.ensure_future(client.blpop([key], timeout=0))
        while not client.connection_pool._in_use_connections:  # type: ignore[attr-defined]
            await asyncio.sleep(0)
        first = asyncio.ensure_future(client.ping())
        second = asyncio.ensure_future(client.incr(f"{key}:n"))
        while len(client.connection_pool._waiters) < 2:  # type: ignore[attr-defined]
            await asyncio.sleep(0)
        first.cancel()
        await other.rpush(key, "z")
        assert await asyncio.wait_for(second, 30) == 1
        assert tuple(await held) == (key.encode(), b"z")
        assert first.cancelled()
        assert not client.connection_pool._waiters  # type: ignore[attr-defined]
    finally:
        await other.delete(f"{key}:n")
        await other.aclose()
        await client.aclose()


async def test_after_a_redis_restart_no_idle_connection_fails_again(tmp_path: Path) -> None:
    """Idle pooled connections die with the server; the first error closes them all, so once
    Redis is back every command succeeds (redis-py alone would fail each stale one once)."""
    redis = RedisServer(tmp_path / "redis", persist=False)
    client = connect(redis.url)
    try:
        await asyncio.gather(*(client.blpop(["nothing"], 0.05) for _ in range(8)))  # 8 idle
        redis.process.kill()
        redis.process.wait()
        with pytest.raises(ConnectionError):
            await client.ping()
        redis = RedisServer(tmp_path / "redis", redis.port, persist=False)
        replies = await asyncio.gather(
            *(client.blpop(["nothing"], 0.05) for _ in range(8)), return_exceptions=True
        )
        assert replies == [None] * 8
    finally:
        await client.aclose()
        redis.stop()
