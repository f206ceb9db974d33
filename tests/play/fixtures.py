"""A whole platform for the play tests (API and browser): Redis (the test session's), an engine
worker, a bot worker answering at once, the matchmaker and the web server with the play API, as
real processes (`services.platform.up.Platform`, what `arena up` runs); and the web server's
stack and a matchmaker in the test's own process (`web_server`, `matchmaker_server`)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.eventlog.store import EventStore
from services.matchmaking.clock import SystemClock
from services.matchmaking.core import Matchmaker
from services.matchmaking.grpc_server import MatchmakerServicer, Notifier, make_server
from services.matchmaking.modes import Policy, build_modes
from services.matchmaking.rating_store import RatingStore
from services.platform.up import Platform
from services.play import botapi, identity, tournaments
from services.play.clients import Engine
from services.play.clients import Matchmaker as MatchmakerClient
from services.play.http import PlayHttp
from services.play.ratelimit import Limits
from services.play.service import Play
from services.readside.access import hmac_seat_check
from services.replay import Replay
from services.replay.http import HttpServer
from services.running import Running
from tests.process_helpers import up_config


@dataclass(frozen=True)
class PlayPlatform:
    """Where the platform listens."""

    run: Running
    base: str  # the web page and the API, e.g. http://127.0.0.1:PORT (no trailing slash)
    namespace: str
    redis_url: str
    platform: Platform  # its services (the soak restarts the bot worker through it)


@pytest.fixture(scope="session")
def play_platform(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PlayPlatform]:
    """One platform for the session's play and browser tests (each test sits its own guests)."""
    namespace = f"play-{uuid.uuid4().hex[:8]}"
    var = tmp_path_factory.mktemp("play-var")
    cfg = up_config(var, engines=1, bots=1, namespace=namespace, redis_url=redis_url)
    with Platform(cfg) as platform:
        run = platform.start()
        assert run.viewer_url is not None
        yield PlayPlatform(run, run.viewer_url.rstrip("/"), namespace, redis_url, platform)


@contextlib.asynccontextmanager
async def matchmaker_server(
    client: aioredis.Redis, namespace: str, secret: bytes
) -> AsyncIterator[str]:
    """A real matchmaker over signed gRPC, on Redis, in this process (bots would come only
    after 10 minutes: the tables wait for people); its address."""
    ratings = RatingStore(client, namespace)
    mm = Matchmaker(
        client,
        build_modes({}, Policy(bot_after_ms=600_000)),
        secret,
        SystemClock(),
        ratings=ratings,
        namespace=namespace,
        rng=random.Random(1),
    )
    notifier = Notifier(client, mm.channel)
    stop = asyncio.Event()
    listener = asyncio.create_task(notifier.run(stop))
    server, port, _ = make_server(MatchmakerServicer(mm, notifier, ratings, 0.2))
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        stop.set()
        await listener
        await server.stop(None)


@dataclass
class Web:
    """The web server's stack in this process: where it listens, and its play API."""

    port: int
    play: Play


@contextlib.asynccontextmanager
async def web_server(
    store: EventStore,
    client: aioredis.Redis,
    namespace: str,
    secret: bytes,
    engines: list[str],
    matchmaker: str = "127.0.0.1:1",
    *,
    tournaments_dir: Path | None = None,
    limits: Limits | None = None,
    people: list[str] | None = None,
) -> AsyncIterator[Web]:
    """HttpServer with the play API over a Replay of `store` (and the Bot API and tournaments
    with `tournaments_dir`), as services/play/web.py mounts them; `engines` and `matchmaker`
    are gRPC addresses (the default matchmaker: none), `people` the people's engines'."""
    replay = Replay(store, secret=secret, seat_check=hmac_seat_check(secret))
    play = Play(
        replay,
        identity.Sessions(client, namespace, secret),
        MatchmakerClient(matchmaker, secret),
        Engine(engines, people=people),
        limits=limits or Limits(client, f"{namespace}:lim"),  # loopback not counted (arena up)
    )
    routers: list[Any] = [PlayHttp(play)]
    host = None
    if tournaments_dir is not None:
        host = tournaments.mount(play, namespace, tournaments_dir, 1, secret)
        routers += [botapi.mount(play, namespace, secret), host]
    http = HttpServer(replay, routers)
    port = await http.start()
    try:
        yield Web(port, play)
    finally:
        await http.close()
        if host is not None:
            await host.host.close()
        await play.close()
        await replay.close()
