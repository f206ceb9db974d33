"""Fan-out benchmark: N SSE spectators of one live game, latency from append to receipt,
beside raw XREAD latency measured in the same run. Report only (never a timed test).

    arena bench replay --json [--spectators 100,1000] [--redis-url URL]

The server (Replay + HttpServer) and the game writer run in this process; the spectators and
the raw XREAD reader run in a child process, so client parsing does not share the server's event
loop. Times are CLOCK_MONOTONIC, which is one clock for every process on a Linux host.
Each run reports SSE over XREAD at p50 and p99 (both measured in that run), CPU per delivery of
the server and of the spectators' process, and with ``--repeat`` the spread of those over rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import resource
import statistics
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any, cast

from ..bots.demo import play_live
from ..cliargs import bench_options, int_list
from ..eventlog.entry import SEED_REVEAL, decode_entry
from ..eventlog.redis_store import OutboxCommand, RedisEventStore
from ..redisinfra.redis_client import connect
from ..redisinfra.server import redis_or_throwaway
from ..replay.core import Replay
from ..replay.http import HttpServer
from ..rules.api import SPECTATOR
from . import kit


class TimedStore(RedisEventStore):
    """Records when each append started, per sequence number."""

    appended: dict[int, float]

    async def append(
        self,
        game: str,
        expected_version: int,
        records: Sequence[bytes],
        outbox: Sequence[OutboxCommand] = (),
        mark: bytes = b"",
    ) -> int:
        """See RedisEventStore.append."""
        t = time.monotonic()
        version = await super().append(game, expected_version, records, outbox, mark)
        for seq in range(expected_version + 1, version + 1):
            self.appended[seq] = t
        return version


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class _Spectator(asyncio.Protocol):
    """One SSE spectator, as cheap as a client can be: it notes when each ``id:`` arrived (the
    time its bytes reached this process) and parses nothing else, so the spectators' own cost
    does not stand in for the server's latency."""

    def __init__(self, request: bytes, out: dict[int, float], ready: asyncio.Event) -> None:
        self.request = request
        self.out = out
        self.ready = ready
        self.head = False
        self.buf = b""
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Send the request."""
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        """Note the arrival time of every entry in ``data``."""
        now = time.monotonic()
        buf = self.buf + data
        if not self.head:
            i = buf.find(b"\r\n\r\n")
            if i < 0:
                self.buf = buf
                return
            self.head = True
            buf = buf[i + 4 :]
            self.ready.set()
        start = 0
        while (i := buf.find(b"\n\n", start)) >= 0:
            if buf.startswith(b"id: ", start):
                self.out[int(buf[start + 4 : buf.index(b"\n", start)])] = now
            elif buf.startswith(b"event: end", start) and not self.ended.done():
                self.ended.set_result(None)
            start = i + 2
        self.buf = buf[start:]

    def connection_lost(self, exc: Exception | None) -> None:
        """The server closed the stream."""
        if not self.ended.done():
            self.ended.set_result(None)


async def _spectator(port: int, game: str, out: dict[int, float], ready: asyncio.Event) -> None:
    request = f"GET /api/games/{game}/stream HTTP/1.1\r\nHost: b\r\n\r\n".encode()
    loop = asyncio.get_running_loop()
    transport, proto = await loop.create_connection(
        lambda: _Spectator(request, out, ready), "127.0.0.1", port
    )
    await proto.ended
    transport.close()


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
    cpu0, kids0 = time.process_time(), _children_cpu()
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
    server_cpu, clients_cpu = time.process_time() - cpu0, _children_cpu() - kids0
    # a spectator's ids are its own positions (answers are withheld from it): back to log seqs,
    # whose append times the store noted
    at = (await replay.feed(game)).positions
    outs = [{at.seq(SPECTATOR, pos): t for pos, t in out.items()} for out in outs]
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
        "sse_vs_xread": {
            "p50": round(_pct(sse, 0.5) / max(_pct(xr, 0.5), 1e-3), 2),
            "p99": round(_pct(sse, 0.99) / max(_pct(xr, 0.99), 1e-3), 2),
        },
        # the server process (HTTP, SSE fan-out, the paced writer) and the spectators' process
        "cpu_us_per_delivery": {
            "server": round(server_cpu * 1e6 / max(len(sse), 1), 2),
            "spectators": round(clients_cpu * 1e6 / max(len(sse), 1), 2),
        },
    }


def _children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def bench_replay(
    url: str | None, spectators: list[int], pace_ms: float, repeat: int = 1
) -> dict[str, Any]:
    """``repeat`` rounds of a run for each spectator count (interleaved: 100, 1000, 100, ...);
    starts a throw-away redis-server if ``url`` is None."""
    env = kit.Envelope("replay")
    _raise_fd_limit()
    runs: dict[int, list[dict[str, Any]]] = {n: [] for n in spectators}
    with redis_or_throwaway(url) as server:
        for _ in range(repeat):
            for n in spectators:
                runs[n].append(asyncio.run(run_one(server, n, pace_ms, "bench")))
    return env.wrap(
        {
            "redis": url or "throw-away",
            "pace_ms": pace_ms,
            "by_spectators": [
                {
                    "spectators": n,
                    "repeats": len(rs),
                    "sse_vs_xread": {
                        q: kit.spread([r["sse_vs_xread"][q] for r in rs], 2) for q in ("p50", "p99")
                    },
                    "server_cpu_us_per_delivery": kit.spread(
                        [r["cpu_us_per_delivery"]["server"] for r in rs], 2
                    ),
                }
                for n, rs in runs.items()
            ],
            "runs": [r for n in spectators for r in runs[n]],
        }
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench replay` options."""
    bench_options(p)
    p.add_argument(
        "--spectators", type=int_list, default="100,1000", help="spectator counts to measure"
    )
    p.add_argument("--pace-ms", type=float, default=5.0, help="pause between answers")
    p.add_argument("--repeat", type=int, default=1, help="rounds over the spectator counts")


def main(args: argparse.Namespace) -> int:
    """`arena bench replay`: print the JSON report."""
    refused = args.repeat < 1 or not args.spectators or min(args.spectators) < 1
    return kit.report(
        "replay",
        lambda: bench_replay(args.redis_url, args.spectators, args.pace_ms, args.repeat),
        "--repeat and --spectators must be at least 1" if refused else "",
    )
