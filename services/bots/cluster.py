"""Engine and bot worker processes on one machine, for the end-to-end tests and the benchmark.

Each worker is a real `arena engine` / `arena bots` process (python -m services.cli) sharing one
Redis namespace; the engines share the secret `SECRET`, the bot workers get none.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import redis.asyncio as aioredis

from services.contracts.streams import MATCHES, NewMatch, Seat
from services.eventlog import archive
from services.eventlog.entry import ANSWER, decode_entry
from services.eventlog.records import AnswerRecord, decode_payload
from services.redisinfra.streams import publish_message

SECRET = "bots-e2e-secret-for-local-clusters-only"  # for local test and benchmark clusters only


def _env(secret: bool = True) -> dict[str, str]:
    """The parent's environment with the cluster's secret (engines), or without any (bot
    workers never hold it: their seat tokens come in the decisions messages)."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SECRET"}
    return dict(env, ARENA_SECRET=SECRET) if secret else env


def start_engines(
    url: str,
    ns: str,
    n: int,
    archive_dir: Path,
    repost_ms: int = 1000,
    extra: tuple[str, ...] = (),
    stderr: Callable[[str], IO[str] | None] | None = None,
    metrics_ports: list[int] | None = None,
) -> list[tuple[subprocess.Popen[str], int]]:
    """`n` engine workers (e0, e1 …) started together; (process, gRPC port) each. `extra`:
    more `arena engine` flags; `stderr(name)`: where each one's stderr goes (default: ours);
    `metrics_ports`: engine i serves /metrics on the i-th."""

    def flags(i: int) -> tuple[str, ...]:
        return (*extra, "--metrics-port", str(metrics_ports[i])) if metrics_ports else extra

    procs = [
        spawn_engine(
            url, ns, f"e{i}", archive_dir, repost_ms, flags(i), stderr(f"e{i}") if stderr else None
        )
        for i in range(n)
    ]
    return [(p, _ready(p)["port"]) for p in procs]


def start_bots(
    url: str,
    ns: str,
    n: int,
    ports: list[int],
    policy: str = "random",
    claim_idle_ms: int = 1000,
    *,
    sessions: bool = True,
    think_ms: int = 0,
) -> list[subprocess.Popen[str]]:
    """`n` bot workers (b0, b1 …) started together, each consuming once this returns (with
    `sessions` off they read arena:decisions only; see `arena bots --help`)."""
    procs = [
        spawn_bots(url, ns, f"b{i}", ports, policy, claim_idle_ms, sessions, think_ms)
        for i in range(n)
    ]
    for p in procs:
        _ready(p)
    return procs


def _ready(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The JSON line a worker prints once it serves."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"worker exited with {proc.wait()}")
    out: dict[str, Any] = json.loads(line)
    return out


def _worker(
    command: str,
    url: str,
    ns: str,
    name: str,
    args: list[str],
    stderr: IO[str] | None,
    secret: bool,
) -> subprocess.Popen[str]:
    """`arena COMMAND` on the cluster's Redis namespace as consumer `name`, with `args`; its
    stdout is ours to read (the JSON line it prints once it serves, and at exit)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "services.cli",
            command,
            "--redis-url",
            url,
            "--namespace",
            ns,
            "--consumer",
            name,
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=_env(secret),
    )


def spawn_engine(
    url: str,
    ns: str,
    name: str,
    archive_dir: Path,
    repost_ms: int = 1000,
    extra: tuple[str, ...] = (),
    stderr: IO[str] | None = None,
) -> subprocess.Popen[str]:
    """An engine worker on a free port (its first line of output names the port)."""
    args = ["--port", "0", "--archive-dir", str(archive_dir), "--claim-idle-ms", "1000"]
    args += ["--bot-repost-ms", str(repost_ms), "--sweep-ms", "100", *extra]
    return _worker("engine", url, ns, name, args, stderr, secret=True)


def spawn_bots(
    url: str,
    ns: str,
    name: str,
    ports: list[int],
    policy: str = "random",
    claim_idle_ms: int = 1000,
    sessions: bool = True,
    think_ms: int = 0,
    extra: tuple[str, ...] = (),
    stderr: IO[str] | None = None,
) -> subprocess.Popen[str]:
    """A bot worker talking to the engines on `ports` (it prints a line once it consumes)."""
    args = ["--policy", policy, "--claim-idle-ms", str(claim_idle_ms)]
    args += ["--engine", ",".join(f"127.0.0.1:{p}" for p in ports)]
    args += ["--sessions" if sessions else "--no-sessions", "--think-ms", str(think_ms), *extra]
    return _worker("bots", url, ns, name, args, stderr, secret=False)


def stop(procs: list[subprocess.Popen[str]]) -> list[dict[str, Any]]:
    """SIGTERM every live process, wait, and return the JSON lines each printed at exit."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    out: list[dict[str, Any]] = []
    for p in procs:
        try:
            text, _ = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            text, _ = p.communicate()
        out += [json.loads(line) for line in (text or "").splitlines() if line.startswith("{")]
    return out


async def publish_matches(
    client: aioredis.Redis,
    ns: str,
    games: int,
    players: int,
    policies: list[str],
    seed: int = 500,
    ruleset: str = "standard",
) -> list[str]:
    """Publish `games` all-bot matches; seat s of game i plays policies[(s + i) % k]."""
    ids: list[str] = []
    for i in range(games):
        seats = [Seat(f"bot:{policies[(s + i) % len(policies)]}", True) for s in range(players)]
        match = NewMatch(match_id=f"{ns}-g{i}", ruleset=ruleset, seats=seats, seed=seed + i)
        await publish_message(client, ns, MATCHES, match)
        ids.append(f"{ns}-g{i}")
    return ids


def archived(archive_dir: Path) -> list[Path]:
    """The finished games' archive files (not the temporary files being written)."""
    if not archive_dir.exists():
        return []
    return sorted(f for f in archive_dir.glob("*.arena") if not f.name.startswith("."))


def answers(path: Path) -> list[AnswerRecord]:
    """The answers logged in an archived game, in order."""
    records = archive.unpack(path.read_bytes()).records
    return [
        decode_payload(e.payload, AnswerRecord)
        for e in map(decode_entry, records)
        if e.kind == ANSWER
    ]
