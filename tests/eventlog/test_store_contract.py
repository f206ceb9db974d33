"""One contract for every EventStore adapter (in-memory and Redis)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.eventlog import InMemoryEventStore, RedisEventStore, Snapshot, VersionConflict
from services.eventlog.store import EventStore

StoreFactory = Callable[[], Awaitable[EventStore]]


@pytest.fixture(params=["memory", "redis", "redis-framed"])
async def new_store(request: pytest.FixtureRequest) -> AsyncIterator[StoreFactory]:
    """Makes stores sharing one backing: separate clients for Redis, one dict for memory."""
    if request.param == "memory":
        shared = InMemoryEventStore()

        async def memory() -> EventStore:
            return shared

        yield memory
        return
    url = request.getfixturevalue("redis_url")
    namespace = request.getfixturevalue("redis_namespace")
    made: list[RedisEventStore] = []

    async def redis_store() -> EventStore:
        # "redis-framed" forces the Lua-framed read path whether or not hiredis is installed.
        framed = True if request.param == "redis-framed" else None
        made.append(RedisEventStore(aioredis.Redis.from_url(url), namespace, framed))
        return made[-1]

    yield redis_store
    for s in made:
        keys = [k async for k in s.client.scan_iter(match=f"{namespace}*")]
        if keys:
            await s.client.delete(*keys)
        await s.aclose()


@pytest.fixture
async def store(new_store: StoreFactory) -> EventStore:
    return await new_store()


def recs(*names: str) -> list[bytes]:
    return [n.encode() for n in names]


async def test_empty_game(store: EventStore) -> None:
    assert await store.head("g1") == 0
    assert await store.read("g1") == []
    assert await store.tail("g1", 0, 0) == []


async def test_batch_append_and_ordered_read(store: EventStore) -> None:
    assert await store.append("g1", 0, recs("a")) == 1
    assert await store.append("g1", 1, recs("b", "c", "d")) == 4
    assert await store.head("g1") == 4
    assert await store.read("g1") == [(1, b"a"), (2, b"b"), (3, b"c"), (4, b"d")]


async def test_ranges(store: EventStore) -> None:
    await store.append("g1", 0, recs(*"abcdef"))
    assert await store.read("g1", after=2) == [(3, b"c"), (4, b"d"), (5, b"e"), (6, b"f")]
    assert await store.read("g1", after=2, upto=4) == [(3, b"c"), (4, b"d")]
    assert await store.read("g1", after=0, upto=1) == [(1, b"a")]
    assert await store.read("g1", after=4, upto=4) == []
    assert await store.read("g1", after=5, upto=99) == [(6, b"f")]
    assert await store.read("g1", after=6) == []


async def test_games_are_separate(store: EventStore) -> None:
    await store.append("g1", 0, recs("a"))
    await store.append("g2", 0, recs("x", "y"))
    assert await store.read("g1") == [(1, b"a")]
    assert await store.head("g2") == 2


async def test_stale_append_conflicts_and_writes_nothing(store: EventStore) -> None:
    await store.append("g1", 0, recs("a", "b"))
    for expected in (0, 1, 3):
        with pytest.raises(VersionConflict) as info:
            await store.append("g1", expected, recs("z"))
        assert info.value.actual == 2 and info.value.expected == expected
    assert await store.read("g1") == [(1, b"a"), (2, b"b")]


async def test_empty_batch_only_checks_version(store: EventStore) -> None:
    assert await store.append("g1", 0, []) == 0
    await store.append("g1", 0, recs("a"))
    assert await store.append("g1", 1, []) == 1
    with pytest.raises(VersionConflict):
        await store.append("g1", 0, [])


async def test_binary_records_round_trip(store: EventStore) -> None:
    blob = bytes(range(256)) * 4
    await store.append("g1", 0, [blob, b"", b"\x00"])
    assert [r for _, r in await store.read("g1")] == [blob, b"", b"\x00"]


async def test_tail_returns_available_records_at_once(store: EventStore) -> None:
    await store.append("g1", 0, recs("a", "b"))
    assert await store.tail("g1", 1, 5000) == [(2, b"b")]


async def test_tail_blocks_until_an_append(new_store: StoreFactory) -> None:
    reader, writer = await new_store(), await new_store()
    await writer.append("g1", 0, recs("a"))
    waiting = asyncio.create_task(reader.tail("g1", 1, 5000))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    await writer.append("g1", 1, recs("b", "c"))
    assert await asyncio.wait_for(waiting, 5) == [(2, b"b"), (3, b"c")]


async def test_tail_times_out_empty(store: EventStore) -> None:
    await store.append("g1", 0, recs("a"))
    assert await store.tail("g1", 1, 50) == []


async def test_race_exactly_one_writer_wins(new_store: StoreFactory) -> None:
    """Two writers append at the same expected version, 200 times, truly concurrently."""
    a, b = await new_store(), await new_store()
    rounds = 200
    wins = {"a": 0, "b": 0}

    async def attempt(store: EventStore, name: str, version: int) -> str | None:
        try:
            await store.append("race", version, [f"{name}{version}-1".encode(), b"x"])
        except VersionConflict as c:
            assert c.actual == version + 2
            return None
        return name

    for r in range(rounds):
        results = await asyncio.gather(attempt(a, "a", 2 * r), attempt(b, "b", 2 * r))
        winners = [w for w in results if w]
        assert len(winners) == 1, results
        wins[winners[0]] += 1
    log = await a.read("race")
    assert [seq for seq, _ in log] == list(range(1, 2 * rounds + 1))
    firsts = [data.decode() for seq, data in log if seq % 2 == 1]
    assert [f[1:] for f in firsts] == [f"{2 * r}-1" for r in range(rounds)]
    assert await b.head("race") == 2 * rounds


async def test_snapshots(store: EventStore) -> None:
    assert await store.load_snapshot("g1") is None
    await store.append("g1", 0, recs(*"abcde"))
    assert await store.save_snapshot("g1", Snapshot(3, b"h3", b"state3"))
    assert await store.load_snapshot("g1") == Snapshot(3, b"h3", b"state3")
    assert not await store.save_snapshot("g1", Snapshot(2, b"h2", b"old"))
    assert not await store.save_snapshot("g1", Snapshot(3, b"h3", b"dup"))
    assert await store.save_snapshot("g1", Snapshot(5, b"h5", b"state5"))
    assert await store.load_snapshot("g1") == Snapshot(5, b"h5", b"state5")
    with pytest.raises(ValueError):
        await store.save_snapshot("g1", Snapshot(6, b"h6", b"future"))


async def test_delete(store: EventStore) -> None:
    await store.append("g1", 0, recs("a"))
    await store.save_snapshot("g1", Snapshot(1, b"h", b"s"))
    await store.delete("g1")
    assert await store.head("g1") == 0
    assert await store.load_snapshot("g1") is None


async def test_game_ids_are_checked(store: EventStore) -> None:
    for bad in ("", "a{b}", "a b", "x" * 101, "a/b"):
        with pytest.raises(ValueError):
            await store.head(bad)


def wall_ms() -> int:
    return int(time.time() * 1000)


async def test_append_times(new_store: StoreFactory) -> None:
    """Each record carries the time its batch was appended (one time per batch, outside the
    record bytes): read_timed/tail_timed give the same records as read/tail, plus the time."""
    store = await new_store()
    before = wall_ms()
    await store.append("g1", 0, recs("a", "b"))
    await asyncio.sleep(0.01)
    await store.append("g1", 2, recs("c"))
    after = wall_ms()
    timed = await store.read_timed("g1")
    assert [(s, d) for s, d, _ in timed] == await store.read("g1")
    times = [t for _, _, t in timed]
    assert all(t is not None for t in times)
    ta, tb, tc = (int(t or 0) for t in times)
    # Redis stamps with the server's clock: the same host in tests, allow a little skew
    assert before - 1000 <= ta == tb <= tc <= after + 1000
    assert tc - ta >= 5  # the second batch went in at least ~10 ms later
    assert await store.read_timed("g1", after=1, upto=2) == timed[1:2]
    assert await store.read_timed("g1", after=3) == []
    assert await store.tail_timed("g1", 1, 5000) == timed[1:]
    assert await store.tail_timed("g1", 0, 0) == timed
    waiting = asyncio.create_task((await new_store()).tail_timed("g1", 3, 5000))
    await asyncio.sleep(0.05)
    await store.append("g1", 3, recs("d"))
    ((seq, data, t),) = await asyncio.wait_for(waiting, 5)
    assert (seq, data) == (4, b"d") and t is not None and t >= tc


async def test_memory_append_times_follow_its_clock() -> None:
    now = [5_000]
    store = InMemoryEventStore(clock=lambda: now[0])
    await store.append("g1", 0, recs("a", "b"))
    now[0] += 250
    await store.append("g1", 2, recs("c"))
    assert await store.read_timed("g1") == [(1, b"a", 5_000), (2, b"b", 5_000), (3, b"c", 5_250)]


async def test_redis_entries_without_a_time_read_as_none(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """Entries written before the append script stamped them: time None, bytes unchanged."""
    for framed in (True, False):
        store = RedisEventStore(redis_client, f"{redis_namespace}{int(framed)}", framed)
        await redis_client.xadd(store.log_key("old"), {"e": b"x"}, id="1-0")
        await store.append("old", 1, recs("y"))
        got = await store.read_timed("old")
        assert [(s, d) for s, d, _ in got] == [(1, b"x"), (2, b"y")]
        assert got[0][2] is None and got[1][2] is not None
        assert await store.tail_timed("old", 0, 1000) == got
        fields: Any = await redis_client.xrange(store.log_key("old"), "2-0", "2-0")
        assert fields[0][1][b"e"] == b"y"  # the record bytes are stored as given, time beside


async def test_long_logs_read_whole_across_pages(store: EventStore) -> None:
    """Redis reads a log in pages (`redis_store.PAGE` entries a command, so no single read
    holds Redis for long); a read across several pages still returns every record in order."""
    from services.eventlog.redis_store import PAGE

    n = 2 * PAGE + 7
    for start in range(0, n, 500):
        batch = [f"r{i}".encode() for i in range(start, min(n, start + 500))]
        await store.append("long", start, batch)
    rows = await store.read("long")
    assert [seq for seq, _ in rows] == list(range(1, n + 1))
    assert rows[-1][1] == f"r{n - 1}".encode()
    middle = await store.read("long", PAGE - 3, 2 * PAGE + 2)
    assert [seq for seq, _ in middle] == list(range(PAGE - 2, 2 * PAGE + 3))
    timed = await store.read_timed("long", 5)
    assert [seq for seq, _, _ in timed] == list(range(6, n + 1))
    tailed = await store.tail("long", 0, 100)  # a tail returns what is there, a page at most
    assert [seq for seq, _ in tailed] == list(range(1, len(tailed) + 1)) and tailed


async def test_redis_reads_a_page_a_command(
    redis_url: str, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each command reads at most a page: 34 entries at 10 a page are four script calls (a
    read from the start goes by plain XRANGE, a page a command too: the test below)."""
    from services.eventlog import redis_store

    monkeypatch.setattr(redis_store, "PAGE", 10)
    store = RedisEventStore(aioredis.Redis.from_url(redis_url), redis_namespace, True)
    await store.append("paged", 0, [b"x%d" % i for i in range(35)])
    calls: list[list[Any]] = []
    read = store._read

    async def counted(keys: list[str], args: list[Any]) -> Any:
        calls.append(args)
        return await read(keys=keys, args=args)

    store._read = counted  # type: ignore[assignment]
    try:
        assert [seq for seq, _ in await store.read("paged", 1)] == list(range(2, 36))
        assert len(calls) == 4 and all(a[3] == 10 for a in calls)

        async def archived_meanwhile(keys: list[str], args: list[Any]) -> Any:
            reply = await read(keys=keys, args=args)
            await store.client.delete(store.log_key("paged"))  # between two pages
            return reply

        store._read = archived_meanwhile  # type: ignore[assignment]
        # a log gone half-way reads as no log (the caller finds the archive), never as a
        # shorter log (a finished game's log cut short looks unfinished)
        assert await store.read("paged", 1) == [] and await store.read_timed("paged") == []
    finally:
        await store.client.delete(store.log_key("paged"))
        await store.aclose()


async def test_redis_reads_a_whole_log_by_xrange_a_page_a_command(
    redis_url: str, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read from the start (the engine's read-back of a finished game) goes by plain XRANGE,
    no script, a page a command; it reads as the script does (an entry with a mark too); a log
    gone between two pages reads as no log, one that never was too."""
    from services.eventlog import redis_store

    monkeypatch.setattr(redis_store, "PAGE", 10)
    store = RedisEventStore(aioredis.Redis.from_url(redis_url), redis_namespace, True)
    await store.append("whole", 0, [b"x%d" % i for i in range(30)])
    key = store.log_key("whole")
    await store.client.xadd(key, {"e": b"marked", "t": b"1", "p": b"mark"}, id="31-0")
    calls: list[tuple[Any, ...]] = []
    client: Any = store.client
    execute = client.execute_command

    async def counted(*args: Any, **options: Any) -> Any:
        calls.append(args)
        return await execute(*args, **options)

    async def no_script(keys: list[str], args: list[Any]) -> Any:
        raise AssertionError("a whole-log read ran the script")

    monkeypatch.setattr(client, "execute_command", counted)
    store._read = no_script  # type: ignore[assignment]
    try:
        rows = await store.read("whole")
        assert [seq for seq, _ in rows] == list(range(1, 32))
        assert rows[0][1] == b"x0" and rows[-1][1] == b"marked"
        pages = [a for a in calls if a[0] == b"XRANGE"]
        assert len(pages) == 4 and all(a[-1] == 10 for a in pages)
        assert await store.read("never") == []

        async def archived_meanwhile(*args: Any, **options: Any) -> Any:
            reply = await execute(*args, **options)
            if args[0] == b"XRANGE":
                await execute("DEL", key)  # between two pages
            return reply

        monkeypatch.setattr(client, "execute_command", archived_meanwhile)
        assert await store.read("whole") == []
    finally:
        await store.client.delete(key)
        await store.aclose()


async def test_redis_xrange_reads_a_log_gone_between_pages_as_none(
    redis_url: str, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.eventlog import redis_store

    monkeypatch.setattr(redis_store, "PAGE", 10)
    store = RedisEventStore(aioredis.Redis.from_url(redis_url), redis_namespace, False)
    await store.append("gone", 0, [b"x%d" % i for i in range(25)])
    xrange = store.client.xrange

    async def archived_meanwhile(*args: Any, **kw: Any) -> Any:
        rows = await xrange(*args, **kw)
        await store.client.delete(store.log_key("gone"))
        return rows

    store.client.xrange = archived_meanwhile  # type: ignore[method-assign]
    try:
        assert await store.read("gone") == []
    finally:
        await store.aclose()
