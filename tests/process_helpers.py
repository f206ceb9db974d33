"""Process helpers for the tests: run `arena COMMAND` as a process, find a process's descendants."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def arena(*args: str, env: dict[str, str] | None = None, **kw: object) -> subprocess.Popen[str]:
    """Start `arena ARGS` (as `python -m services.cli`) in the repository.

    ``env`` defaults to :func:`clean_env`; ``kw`` goes to Popen (e.g. ``stdout=subprocess.PIPE``).
    """
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", *args],
        cwd=ROOT,
        env=env or clean_env(),
        text=True,
        **kw,
    )  # type: ignore[call-overload]


def clean_env() -> dict[str, str]:
    """The environment without REDIS_URL, so `arena up` starts its own redis-server."""
    env = dict(os.environ)
    env.pop("REDIS_URL", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (by parent links in /proc)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parent[int(d.name)] = int(fields[1])
    out: set[int] = set()
    frontier = {pid}
    while frontier:
        kids = {p for p, pp in parent.items() if pp in frontier} - out
        out |= kids
        frontier = kids
    return out


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` that still run (zombies count as gone)."""
    left = set()
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.add(p)
    return left


FREE_PORTS = [
    "--http-port",
    "0",
    "--replay-grpc-port",
    "0",
    "--matchmaker-port",
    "0",
    "--engine-port",
    "0",
    "--metrics-port",
    "0",
]
"""`arena up` flags that give every service a free port and turn /metrics off."""


def cmdline(pid: int) -> str:
    """A process's command line, words joined by spaces ("" if it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def find_below(root: int, *words: str) -> int | None:
    """A live process below ``root`` whose command line has every one of ``words``."""
    for pid in sorted(alive(descendants(root))):
        if all(w in cmdline(pid) for w in words):
            return pid
    return None


def until(cond: Callable[[], object], timeout: float = 30.0, what: str = "condition") -> None:
    """Poll ``cond`` every 0.1 s until it is true; AssertionError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"{what} never held in {timeout:.0f} s"
        time.sleep(0.1)
