"""A full disk under Redis (#46 item 2): an `arena engine` process over a redis-server whose
data folder is a 1 MB tmpfs. The test plays its bot seats itself (reading the decisions
stream, answering with SubmitAction) and records every answer the engine acknowledged. A
filler file takes the tmpfs's room: Redis refuses writes (MISCONF), and the engine refuses
answers with UNAVAILABLE in the disk's words (never INTERNAL), turns NOT_SERVING, counts
`arena_storage_writable{store="redis"}` 0 and says in one line which folder and why ("disk
full"). Once the filler is gone it serves again and answers are taken. Then Redis is stopped
and started again on its AOF: every acknowledged answer is in the logs.

Needs root to mount the tmpfs (skipped with the reason otherwise).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import msgspec
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from scrape_helpers import scrape
from tmpfs_helpers import fill, mounted_tmpfs, unfill

from services.bots.cluster import SECRET, publish_matches, spawn_engine, stop
from services.contracts.decision_ids import DecisionIds
from services.contracts.streams import DECISIONS, BotDecision, decode, stream_keys
from services.errors import DISK_MESSAGE
from services.eventlog.entry import ANSWER, decode_entry
from services.eventlog.records import AnswerRecord, decode_payload
from services.eventlog.redis_store import RedisEventStore
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from services.redisinfra.redis_client import connect
from services.redisinfra.server import RedisServer, free_port
from services.rules import api

GAMES = 4


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs mounted for the test."""
    with mounted_tmpfs(tmp_path / "disk", "1m") as where:
        yield where


class Player:
    """Answers the bot seats' decisions from the decisions stream; remembers what the engine
    acknowledged and what it refused."""

    def __init__(self, url: str, ns: str, port: int) -> None:
        self.client = connect(url)
        self.keys = stream_keys(ns, DECISIONS.name)
        self.cursor = dict.fromkeys(self.keys, "0-0")
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.stub = game_pb2_grpc.GameServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.acked: set[tuple[str, int]] = set()
        self.refused: list[str] = []

    async def round(self) -> None:
        streams: dict[Any, Any] = dict(self.cursor)
        reply: Any = await self.client.xread(streams, count=100, block=50)
        for key, rows in reply or []:
            for mid, fields in rows:
                self.cursor[key.decode()] = mid.decode()
                await self.answer(decode(fields, BotDecision))

    async def answer(self, m: BotDecision) -> None:
        d = msgspec.json.decode(m.body, type=api.Decision)
        req = game_pb2.SubmitActionRequest(
            game_id=m.game,
            seat_token=m.token,
            decision_id=m.decision,
            picks=list(api.default_answer(d).picks),
        )
        try:
            await self.stub.SubmitAction(req, timeout=5)
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.FAILED_PRECONDITION:
                return  # answered already (a repost)
            assert err.code() == grpc.StatusCode.UNAVAILABLE, err
            self.refused.append(err.details() or "")
            return
        self.acked.add((m.game, m.decision))

    async def close(self) -> None:
        await self.channel.close()
        await self.client.aclose()


def _health(port: int) -> int:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        reply = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
        return int(reply.status)


async def _until(cond: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"{what} never held"
        await asyncio.sleep(0.1)


async def test_a_full_disk_refuses_answers_and_loses_none(
    tmpfs: Path, tmp_path: Path, redis_namespace: str
) -> None:
    ns = redis_namespace
    redis = RedisServer(tmpfs / "redis")
    metrics = free_port()
    err_path = tmp_path / "e0.err"
    with err_path.open("w") as err:
        engine = spawn_engine(
            redis.url, ns, "e0", tmp_path / "archive", 1000, ("--metrics-port", str(metrics)), err
        )
    assert engine.stdout is not None
    port = int(msgspec.json.decode(engine.stdout.readline())["port"])
    player = Player(redis.url, ns, port)
    filler = tmpfs / "filler"
    games: list[str] = []
    try:
        games = await publish_matches(player.client, ns, GAMES, 4, ["random"], ruleset="standard")
        for _ in range(20):  # some answers in before the disk fills
            await player.round()
        assert player.acked
        fill(filler, 100_000)  # leave ~100 KB
        deadline = time.monotonic() + 60
        while not player.refused:
            assert time.monotonic() < deadline, "the disk never filled"
            await player.round()
        assert set(player.refused) == {DISK_MESSAGE}
        await _until(lambda: _health(port) == health_pb2.HealthCheckResponse.NOT_SERVING, "down")
        said = f"Redis's data folder {(tmpfs / 'redis').resolve()} cannot be written"
        await _until(lambda: said in err_path.read_text(), "the disk said")
        text = err_path.read_text()
        assert "disk full" in text and "Traceback" not in text, text
        labels = (("path", str((tmpfs / "redis").resolve())), ("store", "redis"))
        assert scrape(metrics, set())[("arena_storage_writable", labels)] == 0
        acked_while_full = len(player.acked)

        filler.unlink()  # room again: Redis writes what it held, and takes writes
        await _until(lambda: _health(port) == health_pb2.HealthCheckResponse.SERVING, "up")
        deadline = time.monotonic() + 30
        while len(player.acked) < acked_while_full + 20:
            assert time.monotonic() < deadline, "no answers taken after the disk was freed"
            await player.round()
        assert "can be written again" in err_path.read_text()
    finally:
        await player.close()
        stop([engine])
        unfill(filler)
    redis.stop()  # SIGTERM: Redis writes and fsyncs its AOF, then exits
    redis = RedisServer(tmpfs / "redis", redis.port)  # ... and reloads it
    client = connect(redis.url)
    try:
        store = RedisEventStore(client, ns)
        logged: set[tuple[str, int]] = set()
        for game in games:
            ids = DecisionIds(SECRET.encode(), game)
            for _, data in await store.read(game):
                entry = decode_entry(data)
                if entry.kind == ANSWER:
                    logged.add(
                        (game, ids.opaque(decode_payload(entry.payload, AnswerRecord).decision))
                    )
        lost = player.acked - logged
        print(
            f"{len(player.acked)} answers acknowledged, {len(player.refused)} refused, {len(lost)} lost"
        )
        assert not lost
    finally:
        await client.aclose()
        redis.stop()


async def test_an_unwritable_archive_folder_is_said_as_that(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game that ends while its archive folder cannot be written stays in Redis, its end
    kept (the answer stands); the sweep says the folder and why, not "Redis unavailable", and
    archives the game once the folder takes files."""
    from services.contracts.streams import NewMatch, Seat
    from services.engine import service
    from services.engine.service import Games
    from services.engine.side import MemorySide
    from services.eventlog import InMemoryEventStore

    blocked = tmp_path / "archive"
    blocked.write_text("a file where the archive folder should be")
    side = MemorySide()
    g = Games(
        InMemoryEventStore(),
        side,
        SECRET.encode(),
        archive_dir=blocked,
        default_time_limit_ms=0,
        bot_repost_ms=0,
        max_decisions=5,
    )
    seats = [Seat("bot:random", True) for _ in range(4)]
    await g.create_game(NewMatch(match_id="g1", ruleset="standard", seats=seats, seed=3))
    for _ in range(10):
        await g.sweep()  # bot seats answered by default up to the cap: the game ends
    assert (await g.get("g1")).finished and side.deadlines == {"g1|-1": side.deadlines["g1|-1"]}
    now = service._now_ms()
    monkeypatch.setattr(service, "_now_ms", lambda: now + service.FINISH_AFTER_MS + 1)
    await g.sweep()  # the finishing deadline: archiving fails again, said as the folder's
    said = [r.message for r in caplog.records]
    assert any(f"archive folder {blocked}: File exists" in m for m in said), said
    assert not any("Redis" in m for m in said), said
    blocked.unlink()
    monkeypatch.setattr(service, "_now_ms", lambda: now + service.FINISH_AFTER_MS + 40_000)
    await g.sweep()  # tried again after its wait: archived now
    assert (blocked / "g1.arena").exists() and not side.deadlines
