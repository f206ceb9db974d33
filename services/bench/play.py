"""`arena bench play`: simulated people playing over the HTTP API while bot games run.

    arena bench play --json [--people 10,25,50,100] [--seconds 20] [--bot-games 50]

A platform of its own (Redis, engine and bot workers, matchmaker, the web server with the play
API: what `arena up` starts) keeps `--bot-games` all-bot games running. For each step of
`--people`, that many people sit down as guests, open tables (one person and bots each) and
play them out over HTTP and SSE exactly as the page does: each reads its seat's stream and,
`--person-think-ms` after a decision of its own arrives, POSTs a legal answer; a finished game
is followed by a new table. The latency measured is from an answer's POST to the seat's next
event on its stream (the answer's entries coming back through the engine, Redis and the web
server). Per step: p50/p90/p99/max, answers per second, each process's CPU share over the
step's wall time, and the load average; and, over the steps, the most people one web-server
process held with p99 under 250 ms. A report (never a timed test): its figures depend on the
machine and on whatever else it runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..cliargs import bench_options, int_list
from ..platform.demo import keep_playing
from ..platform.procs import cpu_seconds
from ..platform.up import Platform, Running, UpConfig
from . import kit

P99_BUDGET_MS = 250.0


class Http:
    """A minimal HTTP/1.1 client (the server closes after each response)."""

    def __init__(self, base: str) -> None:
        host, port = base.split("//", 1)[1].rstrip("/").split(":")
        self.host, self.port = host, int(port)

    async def call(self, method: str, path: str, body: Any = None, token: str = "") -> Any:
        """One request; its JSON body (raises RuntimeError on an error status)."""
        reader, writer = await asyncio.open_connection(self.host, self.port)
        data = json.dumps(body).encode() if body is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        writer.write(head.encode() + b"\r\n" + data)
        await writer.drain()
        raw = await reader.read()
        writer.close()
        status = int(raw.split(b" ", 2)[1])
        payload = raw.split(b"\r\n\r\n", 1)[1]
        out = json.loads(payload) if payload else None
        if status >= 400:
            raise RuntimeError(f"{method} {path}: {status} {out}")
        return out

    async def events(self, path: str, token: str) -> Any:
        """An SSE stream: yields (event, data bytes) as they arrive."""
        reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
        )
        await writer.drain()
        try:
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            event, data = "message", b""
            while line := await reader.readline():
                line = line.rstrip(b"\n")
                if not line:
                    if data:
                        yield event, data
                    event, data = "message", b""
                elif line.startswith(b"event:"):
                    event = line[6:].strip().decode()
                elif line.startswith(b"data:"):
                    data = line[5:].strip()
        finally:
            writer.close()


class Person:
    """One simulated person: sits down, plays tables out, records answer latencies."""

    def __init__(self, http: Http, idx: int, settings: dict[str, Any], think_s: float) -> None:
        self.http, self.idx, self.settings, self.think_s = http, idx, settings, think_s
        self.rng = random.Random(idx)
        self.token = ""
        self.latencies: list[float] = []
        self.sent_at: float | None = None
        self.arrived = asyncio.Event()
        self.seat: tuple[str, int] | None = None
        self.games = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Play tables until `stop`, then resign the current one (its bot finishes it)."""
        guest = await self.http.call("POST", "/api/guests", {"name": f"bench {self.idx}"})
        self.token = guest["token"]
        try:
            while not stop.is_set():
                await self.http.call("POST", "/api/tables", self.settings, self.token)
                self.seat = await self._seated()
                while not stop.is_set() and not await self._play(stop):
                    await asyncio.sleep(0.5)  # the stream was cut (or the game not started yet)
                self.games += 1
        finally:
            if self.seat is not None and stop.is_set():
                game, seat = self.seat
                with contextlib.suppress(RuntimeError, OSError):  # the game ended meanwhile
                    await self.http.call(
                        "POST", f"/api/games/{game}/seats/{seat}/resign", None, self.token
                    )

    async def _seated(self) -> tuple[str, int]:
        async for event, data in self.http.events("/api/me/stream", self.token):
            st = json.loads(data) if event == "status" else {}
            if st.get("state") == "seated":
                return st["seated"]["game"], int(st["seated"]["seat"])
        raise RuntimeError("the status stream ended before a seat")

    async def _play(self, stop: asyncio.Event) -> bool:
        """Follow the seat and answer until its game ends (True) or the stream is cut."""
        assert self.seat is not None
        game, seat = self.seat
        path = f"/api/games/{game}/seats/{seat}"
        answering: asyncio.Task[None] | None = None
        ended = False
        async for event, data in self.http.events(path + "/stream", self.token):
            if self.sent_at is not None:  # the seat's next event after an answer's POST
                self.latencies.append(time.perf_counter() - self.sent_at)
                self.sent_at = None
            if event == "end" or stop.is_set():
                ended = event == "end"
                break
            if event == "decision":
                d = json.loads(data)["decision"]
                if d is not None and (answering is None or answering.done()):
                    answering = asyncio.create_task(self._answer(path, d))
        if answering is not None:
            answering.cancel()
        return ended

    async def _answer(self, path: str, d: dict[str, Any]) -> None:
        await asyncio.sleep(self.think_s * self.rng.uniform(0.5, 1.5))
        keys = [o["key"] for o in d["options"]]
        picks = [] if d["declinable"] else keys[: d["min"]]
        if d["kind"] == "draft" or (not d["declinable"] and d["min"] == 1):
            picks = [self.rng.choice(keys)]
        self.sent_at = time.perf_counter()
        try:
            await self.http.call(
                "POST", path + "/answer", {"decision": d["id"], "picks": picks}, self.token
            )
        except RuntimeError:
            self.sent_at = None  # refused (a duplicate of a decision already moved on)


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1000, 2) if xs else 0.0


async def _step(
    base: str, people: int, seconds: float, settings: dict[str, Any], think_s: float
) -> dict[str, Any]:
    http = Http(base)
    stop = asyncio.Event()
    crowd = [Person(http, i, settings, think_s) for i in range(people)]
    tasks = [asyncio.create_task(p.run(stop)) for p in crowd]
    await asyncio.sleep(min(5.0, seconds / 4))  # sit down and get the first decisions
    for p in crowd:
        p.latencies.clear()
    t0 = time.perf_counter()
    await asyncio.sleep(seconds)
    wall = time.perf_counter() - t0
    lat = [x for p in crowd for x in p.latencies]
    stop.set()  # people resign (their bots finish the games); a stream left idle is cut
    _, late = await asyncio.wait(tasks, timeout=20)
    for t in late:
        t.cancel()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [repr(e) for e in done if isinstance(e, Exception)]
    return {
        "people": people,
        "answers": len(lat),
        "answers_per_s": round(len(lat) / wall, 2),
        "latency_ms": {
            "p50": _pct(lat, 0.50),
            "p90": _pct(lat, 0.90),
            "p99": _pct(lat, 0.99),
            "max": _pct(lat, 1.0),
        },
        "games_finished": sum(p.games for p in crowd),
        "errors_total": len(errors),  # people whose run failed (could not sit down, say)
        "errors": errors[:3],
        "seconds": round(wall, 2),
    }


def bench_play(args: argparse.Namespace) -> dict[str, Any]:
    """Run every step of `args.people`; the report."""
    env = kit.Envelope("play")
    with tempfile.TemporaryDirectory(prefix="arena-bench-play-") as tmp:
        cfg = UpConfig(
            engines=args.engines,
            bots=args.bots,
            var_dir=Path(tmp),
            namespace=f"bench-play-{os.getpid()}",
            redis_url=args.redis_url,
            persist=False,
            http_port=0,
            replay_grpc_port=0,
            matchmaker_port=0,
            engine_port=0,
            metrics_port=0,
            think_ms=args.bot_think_ms,
        )
        with Platform(cfg) as platform:
            run = platform.start()
            assert run.viewer_url is not None
            base = run.viewer_url.rstrip("/")
            procs = {c.name: c.pid for c in platform.sup.children}
            if platform.redis is not None:
                procs["redis"] = platform.redis.pid
            settings = {
                "ruleset": args.ruleset,
                "players": args.players,
                "bot_after_ms": 1,
                "bot_level": "random",
                "hosted_after": 0,
            }
            steps = asyncio.run(_steps(run, base, args, settings, procs))
    held = [
        s["people"]
        for s in steps
        if s["answers"] and not s["errors"] and s["latency_ms"]["p99"] < P99_BUDGET_MS
    ]
    return env.wrap(
        {
            "bot_games": args.bot_games,
            "bot_think_ms": args.bot_think_ms,
            "person_think_ms": args.person_think_ms,
            "table": f"{args.ruleset}-{args.players}: one person, bots in the other seats",
            "engines": args.engines,
            "bot_workers": args.bots,
            "cores": os.cpu_count(),
            "steps": steps,
            "people_held_p99_under_250ms": max(held, default=0),
            "by_people": [
                {
                    "people": n,
                    "repeats": len(rs),
                    "p99_ms": kit.spread([s["latency_ms"]["p99"] for s in rs], 2),
                    "platform_cpu_us_per_answer": kit.spread(
                        [s["platform_cpu_us_per_answer"] for s in rs], 1
                    ),
                }
                for n in args.people
                if (rs := [s for s in steps if s["people"] == n])
            ],
        }
    )


async def _steps(
    run: Running,
    base: str,
    args: argparse.Namespace,
    settings: dict[str, Any],
    procs: dict[str, int],
) -> list[dict[str, Any]]:
    stop = asyncio.Event()
    bots = asyncio.create_task(
        keep_playing(run, args.bot_games, stop, ["random"] * 5, {}, "bench-bots")
    )
    await asyncio.sleep(3)  # the bot games under way
    out = []
    try:
        for people in [n for _ in range(args.repeat) for n in args.people]:  # 10, 25, 10, 25
            load = os.getloadavg()[0]
            cpu0 = {n: cpu_seconds(p) for n, p in procs.items()}
            me0, t0 = time.process_time(), time.perf_counter()
            step = await _step(base, people, args.seconds, settings, args.person_think_ms / 1000)
            wall = time.perf_counter() - t0
            step["cpu_share"] = {
                n: round((cpu_seconds(p) - cpu0[n]) / wall, 3) for n, p in procs.items()
            }
            step["cpu_share"]["people (this process)"] = round(
                (time.process_time() - me0) / wall, 3
            )
            # the platform's processes (not the simulated people) per person's answer; the bot
            # games running beside them are in it too, so it is an upper bound
            step["platform_cpu_us_per_answer"] = round(
                sum(cpu_seconds(p) - cpu0[n] for n, p in procs.items())
                * 1e6
                / max(step["answers"], 1),
                1,
            )
            step["loadavg_1m"] = [round(load, 2), round(os.getloadavg()[0], 2)]
            out.append(step)
            print(json.dumps(step), file=sys.stderr, flush=True)
    finally:
        stop.set()
        await bots
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench play` options."""
    bench_options(p)
    # the defaults finish in about a minute; the figures of docs/benchmarks.md took
    # --people 10,25,50 --seconds 20 --bot-games 50 (and 100 people: ~3 minutes a round)
    p.add_argument("--people", type=int_list, default="10,25", help="simulated people per step")
    p.add_argument("--seconds", type=float, default=10.0, help="measured time per step")
    p.add_argument("--repeat", type=int, default=1, help="rounds over the people counts")
    p.add_argument("--bot-games", type=int, default=20, help="all-bot games kept running")
    p.add_argument("--bot-think-ms", type=int, default=0, help="each bot's pause before it answers")
    p.add_argument(
        "--person-think-ms",
        type=int,
        default=300,
        help="a person's mean pause before answering (uniform in 0.5x-1.5x)",
    )
    p.add_argument("--ruleset", default="standard", help="the people's tables")
    p.add_argument("--players", type=int, default=5, help="seats at a person's table")
    p.add_argument("--engines", type=int, default=1, help="engine worker processes")
    p.add_argument("--bots", type=int, default=1, help="bot worker processes")


def main(args: argparse.Namespace) -> int:
    """`arena bench play`: print the JSON report."""
    if args.repeat < 1 or args.seconds <= 0 or not args.people or min(args.people) < 1:
        print(
            "arena bench play: --repeat, --seconds and --people must be positive", file=sys.stderr
        )
        return 2
    try:
        out = bench_play(args)
    except RuntimeError as err:
        print(f"arena bench play: {err}", file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0
