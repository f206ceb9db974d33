"""Process helpers for the tests: run `arena COMMAND` as a process (`arena up` and `arena
tournament` as most tests start them), find a process's descendants."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.platform.up import UpConfig

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


@contextlib.contextmanager
def arena_up(
    *args: str, stderr: Any = subprocess.PIPE, stop_s: float = 30.0
) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """`arena up ARGS --json` on free ports (FREE_PORTS; a flag in ``args`` overrides one of
    them), with what it printed once up (up.json's fields). On leaving: SIGTERM, and after
    ``stop_s`` seconds SIGKILL (stopping itself is tests/platform/test_up_sigterm.py's)."""
    up = arena("up", *FREE_PORTS, *args, "--json", stdout=subprocess.PIPE, stderr=stderr)
    try:
        assert up.stdout is not None
        line = up.stdout.readline()
        assert line, up.stderr.read() if up.stderr else "arena up printed nothing"
        yield up, json.loads(line)
    finally:
        up.send_signal(signal.SIGTERM)
        try:
            up.communicate(timeout=stop_s)
        except subprocess.TimeoutExpired:
            up.kill()
            up.communicate()


def tournament(
    var: Path, *args: str, timeout: float, env: dict[str, str] | None = None
) -> tuple[dict[str, Any], str]:
    """`arena tournament --var VAR ARGS --json` run to its end (it must exit 0): its JSON
    result and what it said on stderr."""
    p = arena(
        "tournament",
        "--var",
        str(var),
        *args,
        "--json",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err
    result: dict[str, Any] = json.loads(out)
    return result, err


def up_config(var_dir: Path, **fields: Any) -> UpConfig:
    """FREE_PORTS for a platform started in the test's process (services.platform.up.Platform):
    under ``var_dir``, a throw-away Redis (not persisted), every service on a free port, no
    /metrics, bots without a pause; ``fields`` set any other field or override these."""
    from services.platform.up import UpConfig  # not for the tests that start none

    free: dict[str, Any] = {
        "persist": False,
        "http_port": 0,
        "replay_grpc_port": 0,
        "matchmaker_port": 0,
        "engine_port": 0,
        "metrics_port": 0,
        "think_ms": 0,
    }
    return UpConfig(var_dir=var_dir, **(free | fields))


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
