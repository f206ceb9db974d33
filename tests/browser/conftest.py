"""Browser fixtures: Debian's chromium driven by Playwright for Python (`executable_path`: the
browser Playwright would download cannot be reached here), and a replay-server process.

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
from playwright.async_api import Browser, Page, async_playwright

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


@pytest.fixture
async def chromium() -> AsyncIterator[Browser]:
    """Debian's chromium, headless."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no chromium at {CHROMIUM}: install Debian's chromium (.ci/run does)")
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        yield browser
        await browser.close()


@pytest.fixture
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
