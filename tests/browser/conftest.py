"""Browser fixtures: Debian's chromium driven by Playwright for Python (`executable_path`: the
browser Playwright would download cannot be reached here), and a replay-server process.

One Chromium serves every browser test of a pytest process (launching it and Playwright's driver
took about a second of CPU a test); each test gets it with no page of another test open, and the
pages it opens are closed after it. So the browser tests, and the async fixtures they use, run
in the session's event loop (Playwright's objects belong to the loop that made them).

Nothing here installs anything: `.ci/run` installs chromium and a CJK font (so screenshots show
the card names) before the tests; the README says what a developer needs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from playwright.async_api import Browser, Page, Playwright, async_playwright
from pytest_asyncio import is_async_test

from tests.redis_helpers import namespaced_client

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM = os.environ.get("ARENA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


class Tab:
    """One page, with the few calls the tests make (Playwright's async API underneath)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", lambda e: self.errors.append(f"{e}\n{e.stack}"))

    async def goto(self, url: str) -> None:
        """Open a URL."""
        await self.page.goto(url)

    async def js(self, expression: str) -> Any:
        """Evaluate an expression in the page; its JSON value."""
        return await self.page.evaluate(expression)

    async def wait_for(self, expression: str, timeout: float = 30) -> Any:
        """Wait until `expression` is truthy; its value."""
        handle = await self.page.wait_for_function(expression, timeout=timeout * 1000)
        return await handle.json_value()

    async def screenshot(self, path: Path) -> None:
        """Save a PNG of the page."""
        path.parent.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(path))


HERE = Path(__file__).resolve().parent
SESSION_LOOP = pytest.mark.asyncio(loop_scope="session")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests run in the session's event loop, where the shared Chromium lives."""
    for item in items:
        if is_async_test(item) and HERE in Path(item.path).resolve().parents:
            item.add_marker(SESSION_LOOP, append=False)


class Chromium:
    """Playwright and one headless Chromium, launched again if it went away."""

    def __init__(self) -> None:
        self.playwright: Playwright | None = None
        self.browser: Browser | None = None

    async def get(self) -> Browser:
        if not Path(CHROMIUM).exists():
            pytest.fail(f"no chromium at {CHROMIUM}: install Debian's chromium (.ci/run does)")
        if self.playwright is None:
            self.playwright = await async_playwright().start()
        if self.browser is None or not self.browser.is_connected():
            self.browser = await self.playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
            )
        return self.browser

    async def close(self) -> None:
        if self.browser is not None and self.browser.is_connected():
            await self.browser.close()
        if self.playwright is not None:
            await self.playwright.stop()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def _chromium() -> AsyncIterator[Chromium]:
    shared = Chromium()
    yield shared
    await shared.close()


@pytest_asyncio.fixture(loop_scope="session")
async def chromium(_chromium: Chromium) -> AsyncIterator[Browser]:
    """Debian's chromium, headless (the session's); the contexts (and their pages) the test
    opened are closed after it."""
    browser = await _chromium.get()
    before = set(browser.contexts)
    yield browser
    for context in browser.contexts:
        if context not in before:
            await context.close()


@pytest_asyncio.fixture(loop_scope="session")
async def redis_client(redis_url: str, redis_namespace: str) -> AsyncIterator[aioredis.Redis]:
    """tests/conftest.py's redis_client, in the browser tests' event loop."""
    async for client in namespaced_client(redis_url, redis_namespace):
        yield client


@pytest_asyncio.fixture(loop_scope="session")
async def browser(chromium: Browser) -> AsyncIterator[Tab]:
    """A fresh page of its own (cookies included) in that browser."""
    context = await chromium.new_context(viewport={"width": 1400, "height": 900})
    yield Tab(await context.new_page())
    await context.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_replay_server(
    redis_url: str, namespace: str, archive: Path, extra: list[str]
) -> tuple[subprocess.Popen[str], str]:
    """``arena replay-server`` as a real process over the test's Redis namespace."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "services.cli",
            "replay-server",
            "--http-port",
            str(port),
            "--redis-url",
            redis_url,
            "--namespace",
            namespace,
            "--archive",
            str(archive),
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(
            os.environ, ARENA_SECRET=os.environ.get("ARENA_SECRET") or "browser-tests-" + "x" * 32
        ),
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(
                    f"replay-server did not start: {proc.stdout.read() if proc.stdout else ''}"
                )
            time.sleep(0.1)
    return proc, f"http://127.0.0.1:{port}"


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def replay_server(redis_url: str, redis_namespace: str, tmp_path: Path) -> Iterator[str]:
    """``arena replay-server`` over the test's Redis namespace (no engine); its base URL."""
    proc, url = start_replay_server(redis_url, redis_namespace, tmp_path / "archive", [])
    yield url
    stop(proc)
