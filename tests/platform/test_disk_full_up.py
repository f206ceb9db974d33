"""#46's goal for a full disk, through the whole platform: `arena up` with its var folder (Redis's
AOF, the archive, the logs) on a 2 MB tmpfs, bot games published, and a filler file taking the
room mid-play. The platform says "disk full" with the path (the engine's line reaches `arena
up`'s stderr though the log folder is full too), refuses what it cannot persist and keeps
running; once there is room again (the filler gone, the tmpfs made larger), Redis writes what it
held and play goes on. Then `arena up` is stopped and started again on the same folder: every game finishes and verifies, and every log entry a witness read
while the games were played (an acknowledged answer is in the log before it is acknowledged)
is in the archives, byte for byte.

Needs root to mount the tmpfs (skipped with the reason otherwise).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_helpers import FREE_PORTS, arena
from tmpfs_helpers import fill, mounted_tmpfs, unfill

from services.eventlog import archive
from services.eventlog.redis_store import RedisEventStore
from services.redisinfra.redis_client import connect
from services.tournaments.matches import Games, bot_match
from services.verify import verify

GAMES = 8


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs mounted for the test."""
    with mounted_tmpfs(tmp_path / "disk", "2m") as where:
        yield where


def _said(err: Path, var: Path) -> str:
    """What the platform said: arena up's stderr (where a log line goes that its full log
    folder cannot take), and the logs themselves."""
    logs = "".join(p.read_text(errors="replace") for p in (var / "logs").glob("*.log"))
    return err.read_text() + logs


def _up(var: Path, err: Path) -> tuple[subprocess.Popen[str], dict[str, object]]:
    up = arena(
        "up",
        "--var",
        str(var),
        "--think-ms",
        "0",
        "--json",
        *FREE_PORTS,
        stdout=subprocess.PIPE,
        stderr=err.open("a"),
    )
    assert up.stdout is not None
    line = up.stdout.readline()
    assert line, err.read_text()
    return up, json.loads(line)


def _down(up: subprocess.Popen[str]) -> None:
    up.send_signal(signal.SIGTERM)
    try:
        up.wait(120)
    except subprocess.TimeoutExpired:
        up.kill()
        up.wait()


async def _witness(
    url: str, ns: str, games: list[str], seen: dict[tuple[str, int], str], stop: asyncio.Event
) -> None:
    store = RedisEventStore(connect(url), ns)
    head = dict.fromkeys(games, 0)
    while not stop.is_set():
        for g in games:
            try:
                rows = await store.read(g, head[g])
            except Exception:  # noqa: BLE001 - Redis refusing, the game archived: try again
                continue
            for seq, data in rows:
                seen[(g, seq)] = hashlib.sha256(data).hexdigest()
                head[g] = seq
        await asyncio.sleep(0.05)
    await store.aclose()


@pytest.mark.slow
async def test_a_full_var_disk_loses_nothing_acknowledged(tmpfs: Path, tmp_path: Path) -> None:
    var, err = tmpfs / "var", tmp_path / "up.err"
    up, run = _up(var, err)
    url, ns = str(run["redis_url"]), str(run["namespace"])
    games = [f"full-{i}" for i in range(GAMES)]
    seen: dict[tuple[str, int], str] = {}
    stop = asyncio.Event()
    filler = tmpfs / "filler"
    try:
        client = connect(url)
        pub = Games(client, ns, var / "archive")
        for i, g in enumerate(games):
            await pub.publish(bot_match(g, "standard", ["random"] * 5, 100 + i))
        watching = asyncio.create_task(_witness(url, ns, games, seen, stop))
        await asyncio.sleep(1.0)
        fill(filler, 150_000)  # leave ~150 KB
        deadline = time.monotonic() + 90
        # said, naming Redis's folder (the archive folder may fill first and be said first: an
        # engine's archive write and Redis's AOF race for the last bytes)
        redis_dirs = (str((var / "redis").resolve()), str(var / "redis"))
        while not ("disk full" in (said := _said(err, var)) and any(d in said for d in redis_dirs)):
            assert up.poll() is None, err.read_text()
            assert time.monotonic() < deadline, said
            await asyncio.sleep(0.2)
        await asyncio.sleep(3)  # the platform rides it out: still up, refusing
        assert up.poll() is None, err.read_text()
        # room again (more than the games need: the AOF only grows while they play)
        filler.unlink()
        subprocess.run(["mount", "-o", "remount,size=64m", str(tmpfs)], check=True)
        deadline = time.monotonic() + 60
        while "can be written again" not in _said(err, var):
            assert up.poll() is None, err.read_text()
            assert time.monotonic() < deadline, _said(err, var)[-4000:]
            await asyncio.sleep(0.2)
        await asyncio.sleep(2)  # some play after it
        stop.set()
        await watching
        await client.aclose()
    finally:
        stop.set()
        unfill(filler)
        _down(up)
    up, run = _up(var, err)  # again on the same folder: Redis reloads its AOF
    try:
        deadline = time.monotonic() + 180
        while len(list((var / "archive").glob("full-*.arena"))) < GAMES:
            assert up.poll() is None, err.read_text()
            assert time.monotonic() < deadline, "the games did not all finish after a restart"
            await asyncio.sleep(0.5)
    finally:
        _down(up)
    archived: dict[tuple[str, int], str] = {}
    for g in games:
        path = var / "archive" / f"{g}.arena"
        assert verify(path).ok, g
        for seq, data in enumerate(archive.unpack(path.read_bytes()).records, 1):
            archived[(g, seq)] = hashlib.sha256(data).hexdigest()
    lost = [k for k, h in seen.items() if archived.get(k) != h]
    print(f"witness read {len(seen)} entries; {len(lost)} missing or changed in the archives")
    assert not lost, lost[:10]
    text = err.read_text()
    assert "Traceback" not in text, text
