"""A consumer rides out a Redis that is killed and restarted: its task never ends, and what is
published after the restart is handled (with the AOF kept, and with the data lost too)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from redis.exceptions import BusyLoadingError, ResponseError, SlotNotCoveredError

from services.redisinfra.reconnect import Backoff, is_outage, watch_health
from services.redisinfra.redis_client import connect
from services.redisinfra.server import RedisServer
from services.redisinfra.streams import GroupConsumer, Message, publish


def test_backoff_grows_to_its_cap_with_jitter_and_resets() -> None:
    b = Backoff(base=0.1, cap=1.0, rng=random.Random(7))
    delays = [b.delay() for _ in range(8)]
    tops = [min(1.0, 0.1 * 2**i) for i in range(8)]
    assert all(t / 2 <= d <= t for d, t in zip(delays, tops, strict=True)), delays
    assert len(set(delays)) == len(delays)  # jittered, not in step
    b.reset()
    assert b.delay() <= 0.1


def test_outage_errors_are_told_from_bad_requests() -> None:
    assert is_outage(BusyLoadingError("Redis is loading the dataset in memory"))
    assert is_outage(ConnectionRefusedError())
    assert is_outage(SlotNotCoveredError("slot 7 is not covered"))  # a cluster mid-failover
    assert not is_outage(ResponseError("WRONGTYPE Operation against a key"))
    assert not is_outage(ValueError("x"))


@pytest.mark.parametrize("persist", [True, False])
async def test_consumer_survives_kill_9_of_redis(tmp_path: Path, persist: bool) -> None:
    server = RedisServer(tmp_path / "redis", persist=persist)
    client = connect(server.url)
    stream = "t:matches"
    consumer = GroupConsumer(client, stream, "engine", "w1", min_idle_ms=60_000)
    got: list[bytes] = []

    async def handler(m: Message) -> None:
        got.append(m.fields[b"n"])

    health: list[bool] = []

    async def set_serving(up: bool) -> None:
        health.append(up)

    stop = asyncio.Event()
    task = asyncio.create_task(consumer.run(handler, stop, block_ms=200))
    watcher = asyncio.create_task(watch_health(client, set_serving, stop, interval_s=0.1))
    try:
        await publish(client, stream, {"n": "1"})
        await _until(lambda: got == [b"1"])
        server.process.kill()  # kill -9: no goodbye
        server.process.wait()
        await _until(lambda: health == [False])
        await asyncio.sleep(0.5)  # a few failed polls with backoff
        assert not task.done()
        server = RedisServer(tmp_path / "redis", server.port, persist=persist)
        await publish(client, stream, {"n": "2"})
        await _until(lambda: got == [b"1", b"2"])
        await _until(lambda: health == [False, True])
        assert not task.done()
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(task, watcher), 10)
        await client.aclose()
        server.stop()


async def _until(cond: object, timeout: float = 15.0) -> None:
    assert callable(cond)
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "condition never held"
        await asyncio.sleep(0.05)


async def test_consumer_outlives_a_redis_that_refuses_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Out of memory, Redis refuses the consumer's writes (here: creating its group again
    after the stream was lost; a ResponseError, not an outage): the consumer says so once,
    backs off and consumes again once Redis accepts writes; its task never ends (it used to:
    the engine stayed SERVING with no match consumer)."""
    server = RedisServer(tmp_path / "redis", persist=False)
    client = connect(server.url)
    stream = "t:matches"
    consumer = GroupConsumer(client, stream, "engine", "w1", min_idle_ms=60_000)
    got: list[bytes] = []

    async def handler(m: Message) -> None:
        got.append(m.fields[b"n"])

    stop = asyncio.Event()
    task = asyncio.create_task(consumer.run(handler, stop, block_ms=100))
    try:
        await publish(client, stream, {"n": "1"})
        await _until(lambda: got == [b"1"])
        await client.config_set("maxmemory", 1)  # writes (XGROUP CREATE, XADD) are refused
        await client.delete(stream)  # the group goes with it: NOGROUP, then a refused create
        await asyncio.sleep(0.8)  # several refused rounds
        assert not task.done()
        await client.config_set("maxmemory", 0)
        await publish(client, stream, {"n": "2"})
        await _until(lambda: got == [b"1", b"2"])
        assert not task.done()
        said = [line for line in capsys.readouterr().err.splitlines() if "OutOfMemoryError" in line]
        assert len(said) == 1 and "retrying with backoff" in said[0], said
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
        await client.aclose()
        server.stop()
