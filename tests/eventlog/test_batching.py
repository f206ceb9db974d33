"""TickBatcher (coalescing, per-caller results and errors, flights, caps, cancellation) and
AutoPipeline on a real Redis (one pipeline per loop iteration, each caller its own reply)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from services.redisinfra.batching import AutoPipeline, TickBatcher


class Recorder:
    """A flush that records each batch; `gate` (when set) holds every flush until opened."""

    def __init__(self, gate: bool = False) -> None:
        self.calls: list[list[object]] = []
        self.gate: asyncio.Event | None = asyncio.Event() if gate else None
        self.entered = asyncio.Event()

    async def __call__(self, items: list[object]) -> Sequence[object]:
        self.calls.append(list(items))
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        out: list[object] = []
        for item in items:
            if isinstance(item, BaseException):
                out.append(item)  # the item's own failure, for its caller only
            else:
                out.append(("done", item))
        return out


async def _settle() -> None:
    """Let every runnable callback and task run (a few loop iterations)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_concurrent_submits_are_one_flush_in_order() -> None:
    flush = Recorder()
    batcher: TickBatcher[object, object] = TickBatcher(flush)
    results = await asyncio.gather(*(batcher.submit(i) for i in range(20)))
    assert results == [("done", i) for i in range(20)]
    assert flush.calls == [list(range(20))]
    assert (batcher.batches, batcher.items) == (1, 20)


async def test_a_lone_submit_goes_out_alone() -> None:
    flush = Recorder()
    batcher: TickBatcher[object, object] = TickBatcher(flush)
    assert await batcher.submit("a") == ("done", "a")
    assert await batcher.submit("b") == ("done", "b")
    assert flush.calls == [["a"], ["b"]]
    assert batcher.batches == 2


async def test_a_per_item_exception_reaches_only_its_caller() -> None:
    flush = Recorder()
    batcher: TickBatcher[object, object] = TickBatcher(flush)
    bad = ValueError("item 2 is bad")
    items: list[object] = [0, 1, bad, 3]
    results = await asyncio.gather(*(batcher.submit(i) for i in items), return_exceptions=True)
    assert results[2] is bad
    assert [results[i] for i in (0, 1, 3)] == [("done", 0), ("done", 1), ("done", 3)]
    assert batcher.batches == 1


async def test_a_failed_flush_fails_its_batch_only() -> None:
    calls: list[list[int]] = []

    async def flush(items: list[int]) -> list[int]:
        calls.append(items)
        if len(calls) == 1:
            raise ConnectionError("down")
        return [i * 10 for i in items]

    batcher: TickBatcher[int, int] = TickBatcher(flush)
    first = await asyncio.gather(*(batcher.submit(i) for i in range(3)), return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in first), first
    assert await asyncio.gather(*(batcher.submit(i) for i in range(3))) == [0, 10, 20]
    assert calls == [[0, 1, 2], [0, 1, 2]]
    assert batcher.batches == 2


async def test_a_flush_with_the_wrong_result_count_fails_its_batch() -> None:
    async def flush(items: list[int]) -> list[int]:
        return items[:-1]

    batcher: TickBatcher[int, int] = TickBatcher(flush)
    out = await asyncio.gather(*(batcher.submit(i) for i in range(3)), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in out), out


async def test_one_flight_queues_the_next_batch() -> None:
    flush = Recorder(gate=True)
    assert flush.gate is not None
    batcher: TickBatcher[object, object] = TickBatcher(flush, max_flights=1)
    first = [asyncio.create_task(batcher.submit(i)) for i in range(3)]
    await flush.entered.wait()
    # submitted while the first batch is in flight: they wait for it, then go together
    later = [asyncio.create_task(batcher.submit(i)) for i in range(3, 8)]
    await _settle()
    await asyncio.sleep(0.01)
    assert batcher.batches == 1 and flush.calls == [[0, 1, 2]]
    assert not any(t.done() for t in first + later)
    flush.gate.set()
    assert await asyncio.gather(*first, *later) == [("done", i) for i in range(8)]
    assert flush.calls == [[0, 1, 2], [3, 4, 5, 6, 7]]
    assert (batcher.batches, batcher.items) == (2, 8)


async def test_two_flights_run_together() -> None:
    flush = Recorder(gate=True)
    assert flush.gate is not None
    batcher: TickBatcher[object, object] = TickBatcher(flush, max_flights=2)
    a = asyncio.create_task(batcher.submit("a"))
    await _settle()
    b = asyncio.create_task(batcher.submit("b"))
    await _settle()
    c = asyncio.create_task(batcher.submit("c"))
    await _settle()
    assert flush.calls == [["a"], ["b"]]  # "c" waits for a flight to land
    flush.gate.set()
    assert await asyncio.gather(a, b, c) == [("done", "a"), ("done", "b"), ("done", "c")]
    assert flush.calls == [["a"], ["b"], ["c"]]


async def test_max_items_splits_batches() -> None:
    flush = Recorder()
    batcher: TickBatcher[object, object] = TickBatcher(flush, max_items=3)
    results = await asyncio.gather(*(batcher.submit(i) for i in range(7)))
    assert results == [("done", i) for i in range(7)]
    assert flush.calls == [[0, 1, 2], [3, 4, 5], [6]]
    assert (batcher.batches, batcher.items) == (3, 7)


async def test_a_cancelled_caller_does_not_break_the_others() -> None:
    flush = Recorder(gate=True)
    assert flush.gate is not None
    batcher: TickBatcher[object, object] = TickBatcher(flush)
    tasks = [asyncio.create_task(batcher.submit(i)) for i in range(4)]
    await flush.entered.wait()
    tasks[1].cancel()  # mid-flight
    await _settle()
    flush.gate.set()
    out = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(out[1], asyncio.CancelledError)
    assert [out[i] for i in (0, 2, 3)] == [("done", 0), ("done", 2), ("done", 3)]
    # and the batcher keeps working
    assert await asyncio.gather(batcher.submit("x"), batcher.submit("y")) == [
        ("done", "x"),
        ("done", "y"),
    ]


async def test_a_caller_cancelled_before_the_flush_does_not_break_the_others() -> None:
    flush = Recorder()
    batcher: TickBatcher[object, object] = TickBatcher(flush)
    tasks = [asyncio.create_task(batcher.submit(i)) for i in range(3)]
    await asyncio.sleep(0)  # each task queued its item; the flush has not started yet
    tasks[0].cancel()
    out = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(out[0], asyncio.CancelledError)
    assert out[1:] == [("done", 1), ("done", 2)]
    assert await batcher.submit("z") == ("done", "z")


# ---- AutoPipeline on Redis ---------------------------------------------------------------


@pytest.fixture
async def auto(redis_client: aioredis.Redis) -> AsyncIterator[AutoPipeline]:
    yield AutoPipeline(redis_client)


async def test_autopipeline_concurrent_commands_share_one_pipeline(
    auto: AutoPipeline, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    keys = [f"{redis_namespace}:n{i}" for i in range(10)]
    await redis_client.set(keys[3], 41)
    replies = await asyncio.gather(*(auto.run(lambda p, k=k: p.incr(k)) for k in keys))
    assert replies == [42 if i == 3 else 1 for i in range(10)]
    assert auto.batcher.batches == 1 and auto.batcher.items == 10
    got = await asyncio.gather(
        auto.run(lambda p: p.get(keys[3])),
        auto.run(lambda p: p.set(f"{redis_namespace}:s", "v")),
        auto.run(lambda p: p.exists(f"{redis_namespace}:none")),
    )
    assert got == [b"42", True, 0]
    assert auto.batcher.batches == 2


async def test_autopipeline_command_error_fails_only_its_caller(
    auto: AutoPipeline, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    ns = redis_namespace
    await redis_client.set(f"{ns}:text", "not a number")
    out = await asyncio.gather(
        auto.run(lambda p: p.incr(f"{ns}:a")),
        auto.run(lambda p: p.incr(f"{ns}:text")),
        auto.run(lambda p: p.incr(f"{ns}:b")),
        return_exceptions=True,
    )
    assert out[0] == 1 and out[2] == 1
    assert isinstance(out[1], ResponseError), out[1]
    assert auto.batcher.batches == 1
    assert await redis_client.get(f"{ns}:text") == b"not a number"


async def test_autopipeline_bad_adds_fail_only_their_callers(
    auto: AutoPipeline, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    ns = redis_namespace

    def raises(p: object) -> object:
        raise KeyError("no such thing")

    def adds_two(p: object) -> object:
        p.set(f"{ns}:two1", 1)  # type: ignore[attr-defined]
        return p.set(f"{ns}:two2", 2)  # type: ignore[attr-defined]

    def adds_then_raises(p: object) -> object:
        p.set(f"{ns}:half", 1)  # type: ignore[attr-defined]
        raise ValueError("after adding")

    out = await asyncio.gather(
        auto.run(lambda p: p.set(f"{ns}:ok1", "a")),
        auto.run(raises),
        auto.run(adds_two),
        auto.run(lambda p: None),  # adds nothing
        auto.run(adds_then_raises),
        auto.run(lambda p: p.set(f"{ns}:ok2", "b")),
        return_exceptions=True,
    )
    assert out[0] is True and out[5] is True
    assert isinstance(out[1], KeyError)
    assert isinstance(out[2], TypeError) and isinstance(out[3], TypeError)
    assert isinstance(out[4], ValueError)
    assert auto.batcher.batches == 1
    # the refused adds' commands were dropped, not sent
    assert await redis_client.exists(f"{ns}:two1", f"{ns}:two2", f"{ns}:half") == 0
    assert await redis_client.mget(f"{ns}:ok1", f"{ns}:ok2") == [b"a", b"b"]


async def test_autopipeline_all_adds_refused_sends_nothing(auto: AutoPipeline) -> None:
    def raises(p: object) -> object:
        raise KeyError("x")

    out = await asyncio.gather(auto.run(raises), auto.run(lambda p: None), return_exceptions=True)
    assert isinstance(out[0], KeyError) and isinstance(out[1], TypeError)
