"""Process helpers for the tests: run `arena COMMAND` as a process, find a process's descendants."""

from __future__ import annotations

import os
import subprocess
import sys
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
