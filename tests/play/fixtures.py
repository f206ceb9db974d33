"""A whole platform for the play tests (API and browser): Redis (the test session's), an engine
worker, a bot worker answering at once, the matchmaker and the web server with the play API, as
real processes (`services.platform.up.Platform`, what `arena up` runs)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from services.platform.up import Platform, UpConfig
from services.running import Running


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
    cfg = UpConfig(
        engines=1,
        bots=1,
        var_dir=tmp_path_factory.mktemp("play-var"),
        namespace=namespace,
        redis_url=redis_url,
        persist=False,
        http_port=0,
        replay_grpc_port=0,
        matchmaker_port=0,
        engine_port=0,
        metrics_port=0,
        think_ms=0,
    )
    with Platform(cfg) as platform:
        run = platform.start()
        assert run.viewer_url is not None
        yield PlayPlatform(run, run.viewer_url.rstrip("/"), namespace, redis_url, platform)
