"""Snapshots carried in the append script (`RedisEventStore.append_many(..., snapshots=...)`,
eventlog/appends.py): on a real Redis a snapshot is stored exactly when its append is accepted,
never beyond the log's head the append leaves nor over a newer snapshot, in the same script
call as the batch's appends; the appends beside it (marks, outboxes with bytes) are unchanged.
The engine's batch of bot answers (`Games.answer_many`) stores its snapshots so, and a game
loaded afresh from such a snapshot is the game it played."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.contracts.streams import NewMatch
from services.engine.service import Games, Result
from services.engine.side import RedisSide
from services.eventlog import RedisEventStore, Seat, VersionConflict
from services.eventlog.gamelog import GameLog
from services.eventlog.redis_store import OutboxCommand
from services.eventlog.store import Snapshot
from services.redisinfra.redis_client import connect
from services.rules import api

SECRET = b"batched-snapshots"


async def test_a_snapshot_is_stored_with_its_append_never_beyond_the_head(
    store: RedisEventStore,
) -> None:
    calls = store.appender.calls
    got = await store.append_many(
        [
            ("a", 0, [b"1", b"2", b"3"], []),  # snapshot at its new head: stored
            ("b", 0, [b"x", b"y"], []),  # snapshot beyond the head (5 > 2): not stored
            ("c", 7, [b"z"], []),  # a conflict: nothing written, its snapshot neither
            ("d", 0, [b"w"], []),  # no snapshot
        ],
        snapshots=[
            Snapshot(3, b"h3", b"s3"),
            Snapshot(5, b"h5", b"s5"),
            Snapshot(8, b"h", b"s"),
            None,
        ],
    )
    assert got[0] == 3 and got[1] == 2 and got[3] == 1
    assert isinstance(got[2], VersionConflict)
    assert store.appender.calls == calls + 1  # one script call: appends and snapshot together
    assert await store.load_snapshot("a") == Snapshot(3, b"h3", b"s3")
    assert await store.load_snapshot("b") is None
    assert await store.load_snapshot("c") is None and await store.head("c") == 0
    assert await store.load_snapshot("d") is None
    assert await store.head("b") == 2
    # an older snapshot never replaces a newer one; a newer one does
    assert await store.append_many([("a", 3, [b"4"], [])], snapshots=[Snapshot(2, b"o", b"o")]) == [
        4
    ]
    assert await store.load_snapshot("a") == Snapshot(3, b"h3", b"s3")
    assert await store.append_many(
        [("a", 4, [b"5"], [])], snapshots=[Snapshot(5, b"h5", b"s5")]
    ) == [5]
    assert await store.load_snapshot("a") == Snapshot(5, b"h5", b"s5")
    # a snapshot below the head (the append moved on past it) is stored: it is in the log
    assert await store.append_many(
        [("b", 2, [b"q"], [])], snapshots=[Snapshot(2, b"h2", b"s2")]
    ) == [3]
    assert await store.load_snapshot("b") == Snapshot(2, b"h2", b"s2")


async def test_snapshots_beside_marks_and_bytes_outboxes(
    store: RedisEventStore, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """The snapshot's bytes sit among the call's other bytes (marks, records, an outbox's
    bytes): each append of a mixed call reads its own."""
    out = f"{redis_namespace}:outbox"
    body = OutboxCommand("XADD", out, ("*", "game", "e", "body", b"\x00\xffraw"))
    got = await store.append_many(
        [
            ("e", 0, [b"e1", b"e2"], [body]),
            ("f", 0, [b"f1"], []),
            ("g", 0, [b"g1", b"g2", b"g3"], [body]),
        ],
        marks=[b"mark-e", b"", b"mark-g"],
        snapshots=[Snapshot(2, b"he\x00", b"se\xff"), None, Snapshot(3, b"hg", b"sg")],
    )
    assert got == [2, 1, 3]
    assert [r for _, r in await store.read("e")] == [b"e1", b"e2"]
    assert [r for _, r in await store.read("f")] == [b"f1"]
    assert [r for _, r in await store.read("g")] == [b"g1", b"g2", b"g3"]
    assert await store.load_snapshot("e") == Snapshot(2, b"he\x00", b"se\xff")
    assert await store.load_snapshot("f") is None
    assert await store.load_snapshot("g") == Snapshot(3, b"hg", b"sg")
    rows = await redis_client.xrange(out)
    assert [f[b"body"] for _, f in rows] == [b"\x00\xffraw"] * 2
    last = await redis_client.xrevrange(store.log_key("g"), count=1)
    assert last[0][1][b"p"] == b"mark-g"


async def test_the_engines_batches_store_their_snapshots_in_the_append(
    redis_url: str, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bot answers in batches (`answer_many`) with a snapshot due every 20 entries: none goes
    by `save_snapshot`, each game's stored snapshot is at or below its head, and a worker
    that loads the game afresh (snapshot, then the chain-checked tail) has the same game."""
    ns = redis_namespace
    client = connect(redis_url)
    store, side = RedisEventStore(client, ns), RedisSide(client, ns)
    games = Games(store, side, SECRET, snapshot_every=20)
    names = [f"s{i}" for i in range(4)]

    async def no_save(game: str, snapshot: Snapshot) -> bool:
        raise AssertionError("a snapshot went by a call of its own")

    try:
        for k, g in enumerate(names):
            seats = [Seat("bot:random", True) for _ in range(5)]
            await games.create_game(
                NewMatch(match_id=g, ruleset="standard", seats=seats, seed=7 + k)
            )
        monkeypatch.setattr(store, "save_snapshot", no_save)
        crossed: dict[str, int] = {}  # game -> the version after its last append crossing 20k
        for _ in range(40):
            asked = []
            for g in names:
                hot = await games.get(g)
                d = api.pending(hot.game)
                if d is None or hot.game.over:
                    continue
                picks = list(RandomPolicy(d.id * 31 + len(g)).act(d).picks)
                token = tokens.issue(SECRET, g, d.seat, bot=True)
                asked.append((g, token, hot.ids.opaque(d.id), picks))
            if not asked:
                break
            before = {g: (await games.get(g)).log.version for g, *_ in asked}
            out: list[object] = [None] * len(asked)

            def done(i: int, r: Result | BaseException, out: list[object] = out) -> None:
                out[i] = r

            await games.answer_many(asked, done)
            assert all(isinstance(r, Result) for r in out), out
            for g, *_ in asked:
                after = games.cache[g].log.version
                if after // 20 > before[g] // 20:
                    crossed[g] = after
        assert set(crossed) == set(names)  # every game crossed a multiple of 20
        monkeypatch.undo()
        for g in names:
            snap = await store.load_snapshot(g)
            assert snap is not None
            head = await store.head(g)
            assert snap.version == crossed[g] <= head
            hot = games.cache[g]
            loaded = await GameLog.load(store, g)  # the tail chain-checked from the snapshot
            assert loaded.snapshot == snap
            assert (loaded.log.version, loaded.log.head_hash) == (head, hot.log.head_hash)
            fresh = Games(store, side, SECRET, snapshot_every=20)
            again = await fresh.get(g)
            assert api.snapshot(again.game) == api.snapshot(hot.game)
    finally:
        await client.aclose()
