"""Hung, not dead: a worker stopped with SIGSTOP keeps its sockets open and answers nothing.

Two engines and a bot worker play a few all-bot games; once play has begun, engine e0 is
stopped. Every game must finish while it is still stopped: the bot worker hears nothing on e0's
session (not even its heartbeat) and routes e0's games to e1, e1's sweep reposts the decisions
e0 held, e1 claims the matches e0 had read. e1 reports e0 silent (a line naming it and how long,
`arena_worker_silent_seconds`), the bot worker too (`arena_bot_engine_silent_seconds`); once e0
is woken it says how long it stood still, turns NOT_SERVING while it drops its stale games,
then serves again.

The same for a bot worker: one of two stopped while it holds pushed decisions and stream
messages; the engine ends its silent session and publishes what it held, the other bot worker
claims its stream messages, and every game finishes while it is still stopped.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import redis.asyncio as aioredis
from process_helpers import until
from scrape_helpers import scrape, until_sessions_open

from services.bots.cluster import (
    archived,
    publish_matches,
    spawn_bots,
    start_engines,
    stop,
)
from services.contracts.streams import game_key
from services.redisinfra.server import free_port
from services.verify import verify

GAMES = 6
PLAYERS = 4
SILENT = ("--silent-ms", "1500", "--bot-silent-ms", "1500")


async def _all_started(client: aioredis.Redis, ns: str, games: list[str], archive: Path) -> None:
    """Every game seen dealt and into play (20 entries in its log) or over: a short game can
    end, its log archived and removed from Redis, before the last one is dealt."""
    started: set[str] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        over = {f.stem for f in archived(archive)}
        for g in games:
            if g in over or await client.xlen(game_key(ns, g, "log")) >= 20:
                started.add(g)
        if len(started) == len(games):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the games did not start: {sorted(set(games) - started)}")


async def _until_archived(
    archive: Path, n: int, timeout: float, still: subprocess.Popen[str]
) -> None:
    deadline = time.monotonic() + timeout
    while len(archived(archive)) < n:
        assert time.monotonic() < deadline, f"{len(archived(archive))} of {n} games finished"
        assert still.poll() is None
        await asyncio.sleep(0.2)


def _stopped(proc: subprocess.Popen[str]) -> bool:
    state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state == "T"


async def test_a_stopped_engine_is_routed_around(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    ns, archive = redis_namespace, tmp_path / "archive"
    logs = {n: (tmp_path / f"{n}.err").open("w") for n in ("e0", "e1", "b0")}
    metrics = [free_port(), free_port()]
    engine_metrics = [free_port(), free_port()]
    engines = start_engines(
        redis_url,
        ns,
        2,
        archive,
        repost_ms=1000,
        extra=SILENT,
        stderr=lambda name: logs[name],
        metrics_ports=engine_metrics,
    )
    (e0, _), (e1, _) = engines
    ports = [port for _, port in engines]
    bots = spawn_bots(
        redis_url,
        ns,
        "b0",
        ports,
        extra=("--engine-silent-ms", "1500", "--metrics-port", str(metrics[0])),
        stderr=logs["b0"],
    )
    procs = [bots, e0, e1]
    try:
        assert bots.stdout is not None and bots.stdout.readline()  # consuming
        await until_sessions_open(engine_metrics, 1)  # b0's, on both engines
        games = await publish_matches(redis_client, ns, GAMES, PLAYERS, ["random"])
        await _all_started(redis_client, ns, games, archive)
        e0.send_signal(signal.SIGSTOP)
        stopped_at = time.monotonic()
        await _until_archived(archive, GAMES, 60, e1)
        assert _stopped(e0), "e0 woke before the games finished"
        took = time.monotonic() - stopped_at
        silent = scrape(metrics[0], {"arena_bot_engine_silent_seconds"})
        key = ("arena_bot_engine_silent_seconds", (("engine", f"127.0.0.1:{ports[0]}"),))
        assert silent.get(key, 0) > 1, silent
        until(lambda: "engine:e0 silent for" in (tmp_path / "e1.err").read_text(), timeout=15)
        e0.send_signal(signal.SIGCONT)
        until(lambda: "health SERVING" in (tmp_path / "e0.err").read_text(), timeout=15)
        until(lambda: "answers again" in (tmp_path / "b0.err").read_text(), timeout=15)
    finally:
        e0.send_signal(signal.SIGCONT)
        stop(procs)
        for f in logs.values():
            f.close()
    print(f"{GAMES} games finished {took:.1f} s after e0 was stopped")
    for f in archived(archive):
        assert verify(f).ok, f.name
    e0_log, e1_log, b0_log = ((tmp_path / f"{n}.err").read_text() for n in ("e0", "e1", "b0"))
    assert "engine:e0 silent for" in e1_log, e1_log
    assert f"engine 127.0.0.1:{ports[0]} silent for" in b0_log, b0_log
    assert "health NOT_SERVING (stood still for" in e0_log, e0_log
    assert "health SERVING" in e0_log.split("NOT_SERVING (stood still", 1)[1], e0_log
    assert "Traceback" not in e0_log + e1_log + b0_log


async def test_a_stopped_bot_worker_is_routed_around(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    ns, archive = redis_namespace, tmp_path / "archive"
    e_log = (tmp_path / "e0.err").open("w")
    engine_metrics = [free_port()]
    engines = start_engines(
        redis_url,
        ns,
        1,
        archive,
        repost_ms=600_000,
        extra=SILENT,
        stderr=lambda _: e_log,
        metrics_ports=engine_metrics,
    )
    ports = [port for _, port in engines]
    # b0 thinks a while before each answer: when it is stopped it holds decisions
    b0 = spawn_bots(redis_url, ns, "b0", ports, think_ms=200)
    b1 = spawn_bots(redis_url, ns, "b1", ports)
    procs = [b0, b1, *(p for p, _ in engines)]
    try:
        for b in (b0, b1):
            assert b.stdout is not None and b.stdout.readline()
        await until_sessions_open(engine_metrics, 2)  # b0's and b1's
        games = await publish_matches(redis_client, ns, GAMES, PLAYERS, ["random"])
        await _all_started(redis_client, ns, games, archive)
        b0.send_signal(signal.SIGSTOP)
        await _until_archived(archive, GAMES, 60, engines[0][0])
        assert _stopped(b0)
        # its heartbeat in Redis stopped too: the engine says so (a beat later, maybe after
        # the games are done)
        until(lambda: "bots:b0 silent for" in (tmp_path / "e0.err").read_text(), timeout=15)
    finally:
        b0.send_signal(signal.SIGCONT)
        stop(procs)
        e_log.close()
    text = (tmp_path / "e0.err").read_text()
    assert "bot session of bot worker b0 silent for" in text, text
    assert "bots:b0 silent for" in text, text
    for f in archived(archive):
        assert verify(f).ok, f.name
