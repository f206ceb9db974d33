"""`arena bench idle`: what an `arena up` that nobody uses costs, in CPU of each process.

    arena bench idle [--warm-s 20] [--seconds 30] [--repeat 1] --json

Starts `arena up` in a throw-away var folder on free ports (its embedded Redis included), waits
`--warm-s` for every service to be up and settled, then reads each of its processes' CPU time
(user + system, from /proc) over `--seconds`: the share of one core by process (`engine`,
`matchmaker`, `bots`, `replay-server`, `redis-server`, `up`) and in all. The idle platform's
polling (blocking reads per partition, sweeps, keepers, heartbeats) is a cost a user pays all day
for a platform left running (history: docs/benchmarks.md, "Idle cost of arena up"). Linux only
(/proc).
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..cliargs import bench_options
from . import kit

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_FREE_PORTS = ["--redis-port", "0", "--http-port", "0", "--replay-grpc-port", "0"]
_FREE_PORTS += ["--matchmaker-port", "0", "--engine-port", "0", "--metrics-port", "0"]


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process from /proc/PID/stat, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def _tree(root: int) -> dict[int, str]:
    """`root` and every process below it, by pid: a short name from its command line."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat(int(entry))
            if got is not None:
                parents[int(entry)] = got[0]
    below, todo = {root}, [root]
    while todo:
        pid = todo.pop()
        kids = [p for p, parent in parents.items() if parent == pid and p not in below]
        below.update(kids)
        todo += kids
    return {pid: _name(pid) for pid in below}


def _name(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [a.decode(errors="replace") for a in argv if a]
    for word, after in itertools.pairwise(words):  # `python3 -m services.cli COMMAND ...`
        if word == "services.cli":
            return after
    return Path(words[0]).name.split()[0] if words else "?"  # (redis-server shows its address)


def _cpu(pids: dict[int, str]) -> dict[int, float]:
    out: dict[int, float] = {}
    for pid in pids:
        got = _stat(pid)
        if got is not None:
            out[pid] = got[1]
    return out


def _one(warm_s: float, seconds: float) -> dict[str, Any]:
    """One `arena up`, idle: each process's share of a core over `seconds`."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-idle-") as var:
        cmd = [sys.executable, "-m", "services.cli", "up", "--var", var, *_FREE_PORTS, "--json"]
        up = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        try:
            assert up.stdout is not None
            if not up.stdout.readline():
                raise RuntimeError(f"arena up exited with {up.wait()} before it was up")
            time.sleep(warm_s)
            pids = _tree(up.pid)
            before, start = _cpu(pids), time.monotonic()
            time.sleep(seconds)
            after, wall = _cpu(pids), time.monotonic() - start
        finally:
            os.killpg(up.pid, signal.SIGTERM)
            try:
                up.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(up.pid, signal.SIGKILL)
                up.wait()
    shares: dict[str, float] = {}
    for pid, name in pids.items():
        if pid in before and pid in after:
            shares[name] = shares.get(name, 0.0) + (after[pid] - before[pid]) / wall
    return {
        "seconds": round(wall, 2),
        "core_share": round(sum(shares.values()), 4),
        "by_process": {k: round(v, 4) for k, v in sorted(shares.items())},
        "loadavg_1m": kit.load_avg()[0],
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench idle` options."""
    bench_options(p, redis=False)
    p.add_argument("--warm-s", type=float, default=20.0, help="wait after arena up is up")
    p.add_argument("--seconds", type=float, default=30.0, help="measured time per run")
    p.add_argument("--repeat", type=int, default=1, help="runs, each a fresh arena up")


def main(args: argparse.Namespace) -> int:
    """`arena bench idle`: run it and print JSON."""
    env = kit.Envelope("idle")

    def run() -> object:
        runs = [_one(args.warm_s, args.seconds) for _ in range(args.repeat)]
        shares = [r["core_share"] for r in runs]
        return env.wrap({"core_share": kit.spread(shares), "runs": runs})

    bad = ""
    if args.repeat < 1 or args.seconds <= 0 or args.warm_s < 0:
        bad = "--repeat must be at least 1, --seconds above 0, --warm-s not below 0"
    elif not Path("/proc/self/stat").exists():
        bad = "arena bench idle reads /proc: Linux only"
    return kit.report("idle", run, bad)
