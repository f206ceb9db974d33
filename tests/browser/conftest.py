"""Browser fixtures: Debian's chromium (installed here if missing) and a replay-server process."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .cdp import Chromium

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
FONT = "fonts-wqy-microhei"


def _find() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _has_cjk_font() -> bool:
    fc = shutil.which("fc-list")
    if fc is None:
        return False
    return bool(subprocess.run([fc, ":lang=zh"], capture_output=True, text=True).stdout.strip())


def _apt(packages: list[str]) -> str | None:
    """Install Debian packages; the error text, or None on success."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", *packages]):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode:
            return f"{' '.join(cmd)} failed: {done.stderr[-2000:]}"
    return None


@pytest.fixture(scope="session")
def chromium_binary() -> str:
    """Path of chromium; installs the Debian package when it is missing (CI runs as root),
    with a CJK font so the screenshots show the card and role names rather than boxes."""
    found = _find()
    can_apt = shutil.which("apt-get") is not None and os.geteuid() == 0
    if found:
        if can_apt and not _has_cjk_font():
            _apt([FONT])  # best effort: only the screenshots need it
        return found
    if not can_apt:
        pytest.skip("chromium is not installed and apt-get cannot run here (not root/Debian)")
    error = _apt(["chromium", FONT])
    if error:
        pytest.fail(error)
    found = _find()
    assert found, "apt-get installed chromium but it is not on PATH"
    return found


@pytest.fixture
def browser(chromium_binary: str, tmp_path: Path) -> Iterator[Chromium]:
    """A fresh headless browser."""
    b = Chromium(chromium_binary, tmp_path / "profile")
    yield b
    b.close()


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
