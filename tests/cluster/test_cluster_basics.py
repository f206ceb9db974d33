"""The platform's Redis code on a real 3-master cluster: the client is found by itself, a
game's append script (log, deadline, decision) runs in one slot, consumers read every
partition, and `arena tournament --redis-cluster 3` starts, uses and removes its own cluster."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path

from process_helpers import alive, arena, descendants
from redis.crc import key_slot

from services.contracts.streams import DECISIONS, BotDecision, decode, game_key, game_stream_key
from services.engine.side import Effects, RedisSide
from services.eventlog.redis_store import RedisEventStore
from services.redisinfra.cluster_server import LocalCluster
from services.redisinfra.partitions import group_consumers
from services.redisinfra.redis_client import connect, is_cluster


def _decision(game: str) -> BotDecision:
    return BotDecision(game=game, decision=1, seat=0, player="bot:random", version=2, body=b"{}")


async def test_appends_and_consumers_on_a_cluster(redis_cluster: LocalCluster) -> None:
    client = connect(redis_cluster.url)
    assert is_cluster(client)  # found by asking the server, no flag
    store, side = RedisEventStore(client, "c1"), RedisSide(client, "c1")
    games = [f"g{i}" for i in range(48)]  # every master gets some partitions
    try:
        assert await asyncio.gather(*(store.append(g, 0, [b"a"]) for g in games)) == [1] * 48
        effects = {g: Effects(deadline=(1, 1000), messages=(_decision(g),)) for g in games}
        done = await asyncio.gather(
            *(side.append_with(store, g, 1, [b"b", b"c"], effects[g]) for g in games)
        )
        assert done == [3] * 48
        for g in games:
            keys = [game_key("c1", g, "log"), side.deadlines_key(g)]
            keys.append(game_stream_key("c1", DECISIONS.name, g))
            assert len({key_slot(k.encode()) for k in keys}) == 1
            assert [d for _, d in await store.read(g)] == [b"a", b"b", b"c"]
        assert sorted(await side.due(5000, 100)) == sorted((g, 1) for g in games)
        consumers = group_consumers(client, "c1", DECISIONS, "w")
        got = []
        for c in consumers:
            await c.start()
            got += await c.read_new(100, 10)
        assert sorted(decode(m.fields, BotDecision).game for m in got) == sorted(games)
    finally:
        await client.aclose()


def test_tournament_starts_its_own_cluster(tmp_path: Path) -> None:
    var = tmp_path / "var"
    out_path, err_path = tmp_path / "out.json", tmp_path / "err.txt"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        p = arena(
            "tournament",
            "--var",
            str(var),
            "--redis-cluster",
            "3",
            "--ruleset",
            "standard",
            "--players",
            "4",
            "--games",
            "3",
            "--policies",
            "heuristic,random",
            "--json",
            stdout=out,
            stderr=err,
        )
    # the processes below the tournament, seen while it runs (once it has exited and been
    # reaped they are no longer its descendants), and which of them are redis-servers
    kids: set[int] = set()
    servers: set[int] = set()
    deadline = time.monotonic() + 240
    try:
        while p.poll() is None and time.monotonic() < deadline:
            for pid in descendants(p.pid) - kids:
                kids.add(pid)
                with contextlib.suppress(OSError):
                    if Path(f"/proc/{pid}/comm").read_text().strip() == "redis-server":
                        servers.add(pid)
            time.sleep(0.2)
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
    assert p.returncode == 0, err_path.read_text()
    assert json.loads(out_path.read_text())["games_done"] == 3
    assert len(servers) >= 6, servers  # three masters and their replicas were seen running
    deadline = time.monotonic() + 5
    while alive(kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(kids)  # the six redis-server processes went with it, and the rest


async def test_a_persons_seat_and_answer_count_share_a_pipeline_on_a_cluster(
    redis_cluster: LocalCluster,
) -> None:
    """The play API reads a person's seat and counts the answer in one pipeline (seat.py
    `_seat_counted`): on a cluster its keys lie in other slots, and it still reads and counts."""
    from services.play import identity
    from services.play.ratelimit import RateLimit

    client = connect(redis_cluster.url)
    try:
        sessions = identity.Sessions(client, "cluster-pipe", b"s" * 40)
        player, _ = await identity.Guests(sessions).create("Ann")
        await sessions.seat_at(player.player, "g1", 2, 60_000)
        limit = RateLimit(client, "cluster-pipe:rl", 3)
        assert key_slot(sessions._player(player.player).encode()) != key_slot(b"cluster-pipe:rl")
        counts, allowed = [], []
        for _ in range(5):
            async with client.pipeline(transaction=False) as pipe:
                sessions.read_record(pipe, player.player)
                limit.count(pipe, f"{player.player}:g1")
                replies = await pipe.execute()
            seat = sessions.seat_in(sessions.fields(replies[0]))
            assert seat is not None and (seat.game, seat.seat) == ("g1", 2)
            counts.append(int(replies[-1]))
            allowed.append(limit.allowed(replies))
        # counted one by one within a second's window (a new window starts again at 1)
        assert counts[0] == 1
        assert all(b in (a + 1, 1) for a, b in zip(counts, counts[1:], strict=False))
        assert allowed == [c <= 3 for c in counts]
    finally:
        await client.aclose()
