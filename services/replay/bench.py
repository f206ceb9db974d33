"""Fan-out benchmark: N SSE spectators of one live game, latency from append to receipt,
beside raw XREAD latency measured in the same run. Report only (never a timed test).

    arena bench replay --json [--spectators 100,1000] [--redis-url URL]

The server (Replay + HttpServer) and the game writer run in this process; the spectators and
the raw XREAD reader run in a child process, so client parsing does not share the server's event
loop. Times are CLOCK_MONOTONIC, which is one clock for every process on a Linux host.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from ..cliargs import bench_options, int_list
from ..eventlog.entry import SEED_REVEAL, decode_entry
from ..eventlog.redis_client import connect
from ..eventlog.redis_store import OutboxCommand, RedisEventStore
from ..eventlog.server import redis_or_throwaway
from .core import Replay
from .demo import play_live
from .http import HttpServer


class TimedStore(RedisEventStore):
    """Records when each append started, per sequence number."""

    appended: dict[int, float]

    async def append(
        self,
        game: str,
        expected_version: int,
        records: Sequence[bytes],
        outbox: Sequence[OutboxCommand] = (),
    ) -> int:
        """See RedisEventStore.append."""
        t = time.monotonic()
        version = await super().append(game, expected_version, records, outbox)
        for seq in range(expected_version + 1, version + 1):
            self.appended[seq] = t
        return version


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _spectator(port: int, game: str, out: dict[int, float], ready: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    writer.write(f"GET /api/games/{game}/stream HTTP/1.1\r\nHost: b\r\n\r\n".encode())
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")
    ready.set()
    while line := await reader.readline():
        if line.startswith(b"id: "):
            out[int(line[4:])] = time.monotonic()
        elif line.startswith(b"event: end"):
            break
    writer.close()


async def _xread(url: str, key: str, out: dict[int, float]) -> None:
    client = connect(url)
    last = "0-0"
    while True:
        reply: Any = await client.xread({key: last}, block=2000)
        now = time.monotonic()
        if not reply:
            continue
        for sid, fields in reply[0][1]:
            last = sid.decode()
            out[int(last.split("-")[0])] = now
            if decode_entry(fields[b"e"]).kind == SEED_REVEAL:
                await client.aclose()
                return


def _clients(port: int, game: str, n: int, url: str, key: str, conn: Connection) -> None:
    _raise_fd_limit()

    async def main() -> None:
        outs: list[dict[int, float]] = [{} for _ in range(n)]
        raw: dict[int, float] = {}
        readies = [asyncio.Event() for _ in range(n)]
        tasks = [asyncio.create_task(_spectator(port, game, outs[i], readies[i])) for i in range(n)]
        xr = asyncio.create_task(_xread(url, key, raw))
        await asyncio.gather(*(r.wait() for r in readies))
        conn.send("ready")
        await asyncio.gather(*tasks)
        xr.cancel()
        conn.send((outs, raw))

    asyncio.run(main())


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1000, 3) if xs else 0.0


async def run_one(url: str, spectators: int, pace_ms: float, namespace: str) -> dict[str, Any]:
    """One run: a live game at ``pace_ms`` per answer watched by ``spectators``."""
    client = connect(url)
    store = TimedStore(client, namespace)
    store.appended = {}
    replay = Replay(store)
    http = HttpServer(replay)
    port = await http.start()
    game = f"bench-{spectators}-{int(time.time() * 1000)}"
    go = asyncio.Event()
    started = {"after": 0}

    async def pace(version: int) -> None:
        if not go.is_set():
            await go.wait()
            started["after"] = version
        await asyncio.sleep(pace_ms / 1000)

    writer = asyncio.create_task(play_live(store, game, players=8, seed=spectators, pace=pace))
    while not await store.head(game):
        await asyncio.sleep(0.01)
    parent, child = mp.get_context("spawn").Pipe()
    proc = mp.get_context("spawn").Process(
        target=_clients, args=(port, game, spectators, url, store.log_key(game), child)
    )
    proc.start()
    await asyncio.to_thread(parent.recv)  # every spectator connected
    go.set()
    await writer
    outs, raw = await asyncio.to_thread(parent.recv)
    proc.join()
    after = started["after"]
    sse = [t - store.appended[s] for out in outs for s, t in out.items() if s > after]
    xr = [t - store.appended[s] for s, t in raw.items() if s > after]
    await http.close()
    await replay.close()
    await client.delete(store.log_key(game))
    await client.aclose()
    sent = {s for out in outs for s in out if s > after}  # answers are not sent to spectators
    return {
        "spectators": spectators,
        "entries": len(store.appended) - after,
        "entries_sent": len(sent),
        "deliveries": len(sse),
        "missing": spectators * len(sent) - len(sse),
        "sse_ms": {"p50": _pct(sse, 0.5), "p99": _pct(sse, 0.99), "max": _pct(sse, 1.0)},
        "xread_ms": {"p50": _pct(xr, 0.5), "p99": _pct(xr, 0.99), "max": _pct(xr, 1.0)},
        "mean_sse_ms": round(statistics.fmean(sse) * 1000, 3) if sse else 0.0,
    }


def bench_replay(url: str | None, spectators: list[int], pace_ms: float) -> dict[str, Any]:
    """Runs for each spectator count; starts a throw-away redis-server if ``url`` is None."""
    _raise_fd_limit()
    with redis_or_throwaway(url) as server:
        return {
            "redis": url or "throw-away",
            "pace_ms": pace_ms,
            "runs": [asyncio.run(run_one(server, n, pace_ms, "bench")) for n in spectators],
        }


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench replay` options."""
    bench_options(p)
    p.add_argument(
        "--spectators", type=int_list, default="100,1000", help="spectator counts to measure"
    )
    p.add_argument("--pace-ms", type=float, default=5.0, help="pause between answers")


def main(args: argparse.Namespace) -> int:
    """`arena bench replay`: print the JSON report."""
    try:
        out = bench_replay(args.redis_url, args.spectators, args.pace_ms)
    except RuntimeError as err:
        print(f"arena bench replay: {err}", file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0
