"""The replay server's /metrics: every metric is served, and each count moves where its event
happens — HTTP requests by route and status class, lobby listings, spectators connecting and
leaving (SSE and gRPC), entries and decisions sent — in-process, and in a real
`arena replay-server --metrics-port 0` process."""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import pytest
import redis.asyncio as aioredis
from process_helpers import arena, clean_env
from scrape_helpers import Samples
from scrape_helpers import scrape as scrape_names

from services.bots.demo import play_live
from services.eventlog import InMemoryEventStore, RedisEventStore
from services.eventlog.store import EventStore
from services.observability import serve, stop_serving
from services.platform.procs import replay_ready
from services.proto_gen.arena.v1 import replay_pb2, replay_pb2_grpc
from services.readside.decisions import Pending
from services.readside.positions import positions_of
from services.replay import Replay
from services.replay.grpc_service import start_grpc
from services.replay.http import HttpServer
from services.replay.metrics import Metrics
from services.rules.api import SPECTATOR

from .live import LiveGame, settle
from .sse import get, get_json, open_sse

NAMES = {
    "arena_replay_spectators",
    "arena_replay_events_sent",
    "arena_replay_decisions_sent",
    "arena_replay_http_requests",
    "arena_replay_listings",
    "arena_replay_games_listed",
    "arena_replay_feeds",
    "arena_replay_entries_unreadable",
}


def scrape(port: int) -> Samples:
    """GET /metrics (every family in NAMES must be there)."""
    return scrape_names(port, NAMES)


def requests(route: str, status: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return "arena_replay_http_requests_total", (("route", route), ("status", status))


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


async def until(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


class DraftPending:
    """A decision source that always says: every seat is drafting at the log's head (public),
    its version a spectator's position, as the engine's GetDecision gives it to a spectator."""

    def __init__(self, store: EventStore) -> None:
        self.store = store

    async def pending(self, game: str) -> Pending | None:
        at = positions_of(await self.store.read(game))
        return Pending(at.position(SPECTATOR, at.head), 0, "draft")

    async def close(self) -> None:
        return None


@pytest.fixture
async def store(redis_client: aioredis.Redis, redis_namespace: str) -> RedisEventStore:
    return RedisEventStore(redis_client, redis_namespace)


@pytest.fixture
async def served(store: RedisEventStore) -> AsyncIterator[tuple[Metrics, int, int]]:
    """A Replay with its own metrics behind HTTP, and those metrics on a /metrics port."""
    metrics = Metrics()
    replay = Replay(
        store, seat_check=lambda g, s, t: False, decisions=DraftPending(store), metrics=metrics
    )
    http = HttpServer(replay)
    port = await http.start()
    exporter = serve(0, metrics.registry)
    yield metrics, port, exporter.server_port
    await http.close()
    await replay.close()
    await asyncio.to_thread(stop_serving, exporter)


async def test_http_requests_and_listings(
    store: RedisEventStore, served: tuple[Metrics, int, int]
) -> None:
    metrics, port, mport = served
    await play_live(store, "fin", players=4, seed=1)
    status, body = await get_json(port, "/api/games")
    assert status == 200 and len(body["games"]) == 1
    assert (await get(port, "/api/games?status=maybe"))[0] == 400
    assert (await get(port, "/api/games/none"))[0] == 404
    assert (await get(port, "/api/games/fin"))[0] == 200
    assert (await get(port, "/nope"))[0] == 404
    assert (await get(port, "/"))[0] == 200
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /api/games HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await reader.read()).startswith(b"HTTP/1.1 405")
    writer.close()
    got = await asyncio.to_thread(scrape, mport)
    assert got[requests("games", "2xx")] == 1 and got[requests("games", "4xx")] == 1
    assert got[requests("game", "4xx")] == 1 and got[requests("game", "2xx")] == 1
    assert got[requests("viewer", "2xx")] == 1
    assert got[requests("other", "4xx")] == 2  # no route, and a POST
    assert got[("arena_replay_listings_total", (("transport", "http"),))] == 1
    assert got[("arena_replay_games_listed_total", (("transport", "http"),))] == 1
    assert got[("arena_replay_feeds", ())] == 1  # "fin", loaded by GET /api/games/fin


async def test_sse_spectators_events_and_decisions(
    store: RedisEventStore, served: tuple[Metrics, int, int]
) -> None:
    metrics, port, mport = served
    await play_live(store, "fin", players=4, seed=1)
    live = LiveGame(store, "watched", players=4, seed=3)
    live.step(5)
    while not await store.head("watched"):
        await asyncio.sleep(0.01)
    leaver = await open_sse(port, "/api/games/watched/stream")
    other = await open_sse(port, "/api/games/fin/stream")  # a finished game: sent, then ended
    assert (await asyncio.wait_for(other.next(), 10)) is not None
    await until(lambda: sample(metrics, "arena_replay_spectators", transport="sse") == 1)
    assert (await asyncio.to_thread(scrape, mport))[
        ("arena_replay_spectators", (("transport", "sse"),))
    ] == 1
    leaver.close()  # a viewer closing its tab: noticed at the next write
    deadline = time.monotonic() + 10
    while sample(metrics, "arena_replay_spectators", transport="sse") != 0:
        assert time.monotonic() < deadline, "the closed stream still counts"
        live.step(1)
        await asyncio.sleep(0.05)
    other.close()
    before = sample(metrics, "arena_replay_events_sent_total", transport="sse")
    before_decisions = sample(metrics, "arena_replay_decisions_sent_total")
    sse = await open_sse(port, "/api/games/watched/stream")
    await until(lambda: sample(metrics, "arena_replay_spectators", transport="sse") == 1)
    entries = decisions = 0
    finishing = asyncio.create_task(live.finish())
    while (m := await asyncio.wait_for(sse.next(), 30)) is not None and m.event != "end":
        entries += m.event == "message"
        decisions += m.event == "decision"
    await finishing
    sse.close()
    await until(lambda: sample(metrics, "arena_replay_spectators", transport="sse") == 0)
    await until(
        lambda: (
            sample(metrics, "arena_replay_http_requests_total", route="stream", status="2xx") == 3
        )
    )
    got = await asyncio.to_thread(scrape, mport)
    assert entries > 0
    assert got[("arena_replay_events_sent_total", (("transport", "sse"),))] - before == entries
    assert decisions > 0
    assert got[("arena_replay_decisions_sent_total", ())] - before_decisions == decisions
    assert got[("arena_replay_spectators", (("transport", "sse"),))] == 0
    assert got[requests("stream", "2xx")] == 3  # the one that left, and two that saw the end


async def test_grpc_spectators_events_and_listings() -> None:
    store = InMemoryEventStore()
    await play_live(store, "done", players=5, seed=4)
    live = LiveGame(store, "live", players=5, seed=5)
    live.step(20)
    await settle()

    async def ids() -> list[str]:
        return ["done", "live"]

    metrics = Metrics()
    replay = Replay(store, live_ids=ids, seat_check=lambda g, s, t: False, metrics=metrics)
    server, port = await start_grpc(replay, "127.0.0.1:0")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = replay_pb2_grpc.ReplayServiceStub(channel)
        page = await stub.ListGames(replay_pb2.ListGamesRequest(limit=1))
        assert len(page.games) == 1
        assert sample(metrics, "arena_replay_listings_total", transport="grpc") == 1
        assert sample(metrics, "arena_replay_games_listed_total", transport="grpc") == 1
        got: list[int] = []

        async def watch() -> None:
            call = stub.StreamGame(replay_pb2.StreamGameRequest(game_id="live", viewer=SPECTATOR))
            async for e in call:
                got.append(e.seq)

        task = asyncio.create_task(watch())
        await until(lambda: sample(metrics, "arena_replay_spectators", transport="grpc") == 1)
        await live.finish()
        await asyncio.wait_for(task, 10)
        await until(lambda: sample(metrics, "arena_replay_spectators", transport="grpc") == 0)
        assert got and sample(metrics, "arena_replay_events_sent_total", transport="grpc") == len(
            got
        )
        assert sample(metrics, "arena_replay_events_sent_total", transport="sse") == 0
    await server.stop(0)
    await replay.close()


def test_the_ready_line_names_the_metrics_port() -> None:
    assert replay_ready("replay-server: web viewer on http://h:8080/") == {"url": "http://h:8080/"}
    assert replay_ready("replay-server: web viewer on http://h:8080/ (/metrics on port 9301)") == {
        "url": "http://h:8080/",
        "metrics_port": 9301,
    }
    assert replay_ready("replay-server: started redis://x (throw-away)") is None


def test_arena_replay_server_serves_metrics(
    redis_url: str, redis_namespace: str, tmp_path: Path
) -> None:
    proc = arena(
        "replay-server",
        *("--redis-url", redis_url, "--namespace", redis_namespace, "--http-port", "0"),
        *("--metrics-port", "0", "--archive", str(tmp_path)),
        stdout=subprocess.PIPE,
        env=dict(clean_env(), ARENA_SECRET="replay-metrics-" + "x" * 32),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        info = replay_ready(line)
        assert info is not None and "metrics_port" in info, line
        mport = int(str(info["metrics_port"]))
        http = int(re.findall(r":(\d+)/", str(info["url"]))[0])
        assert mport not in (0, http)
        with urllib.request.urlopen(f"http://127.0.0.1:{http}/api/games", timeout=5) as r:
            assert r.status == 200
        deadline = time.monotonic() + 5  # counted once the response is out: poll
        while (got := scrape(mport)).get(requests("games", "2xx")) != 1:
            assert time.monotonic() < deadline, got
            time.sleep(0.05)
        assert got[("arena_replay_listings_total", (("transport", "http"),))] == 1
        # /metrics listens on the server's --host (127.0.0.1 by default), not every address
        assert listening(mport) == {"127.0.0.1"}, listening(mport)
    finally:
        proc.terminate()
        proc.wait(10)


def listening(port: int) -> set[str]:
    """The IPv4 addresses a TCP socket of this machine listens on at `port` (/proc/net/tcp)."""
    out = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        addr, _, hexport = local.partition(":")
        if state == "0A" and int(hexport, 16) == port:  # 0A: LISTEN
            out.add(".".join(str(int(addr[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return out
