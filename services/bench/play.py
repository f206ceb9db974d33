"""`arena bench play`: simulated people playing over the HTTP API while bot games run.

    arena bench play --json [--people 10,25] [--seconds 10] [--bot-games 20] [--tables]
        [--engines 1] [--people-engines 0] [--layouts 2+0,1+1]

A platform of its own (Redis, engine and bot workers, matchmaker, the web server with the play
API: what `arena up` starts) keeps `--bot-games` all-bot games running at full speed. For each
step of `--people`, that many people sit down as guests and play tables of one person and bots
over HTTP and SSE exactly as the page does: each follows its status stream to its seat, reads
its seat's stream and, `--person-think-ms` after a decision of its own arrives, POSTs a legal
answer; a finished game is followed by a new table.

Tables: by default the bench seats its people itself, as a host that publishes its games does
(a tournament the web server runs): the person's session is given the seat and the match goes
to the engines on `arena:matches`, so a table costs Redis writes and no round trip to the
matchmaker (at 25 people and more, loaded, the matchmaker's CreateTable once ran past the
play API's 5 s deadline and people never sat down). `--tables`: each person opens its table
through the play API (`POST /api/tables`, the matchmaker), as the page does; its failures are
counted (`table_errors`).

Each step has three windows, measured apart:
- the bot games alone (`--bots-seconds`): the platform's CPU per bot decision (every process's
  CPU over the decisions the engines took: their `arena_engine_actions` metric);
- the people beside the bot games (`--seconds`, after they sat down): the people's latency, from
  an answer's POST to the seat's next event on its stream (the answer's entries back through the
  engine, Redis and the web server): p50/p90/p99/max; how fast the bot games went on beside
  them; each process's CPU share;
- the people alone (`--alone-seconds`), once the bot games have run out (none is started
  meanwhile, they are resumed after): the platform's CPU per person-answer (every process: the
  engines, the bot workers for the bot seats at the people's tables, Redis, the web server, the
  matchmaker), less what the platform costs with nobody playing (a last window, `--idle-seconds`,
  once the people have left: its loops and heartbeats), and the people's latency with nothing
  beside them. (Charged at the bot rate from the first window, the people's share of a window
  with the bot games was too small to tell from their noise: ~100 answers among ~10,000 bot
  decisions.)
Each with the load average; and once, the CPU per decision of the same rules in this process
(`in_process_cpu_us_per_decision`: the ratios' peer, measured in this run).

Over the steps: the most people held with p99 under 150 ms (the goal of issue 44) and no table
failing. A report (never a timed test): its figures depend on the machine and its other load.

Engine layouts: `--engines E` engines take the matches and serve every game, unless
`--people-engines P` people's engines (`arena engine --role people`) serve the games a person
sits at, apart from the bot-only games' sessions. `--layouts 2+0,1+1` alternates layouts in one
run (a fresh platform for each, `--repeat` rounds), so both are measured under the same
changing load; each step says its `layout` and how many answers each engine logged for each
kind of game (`table_answers_by_engine`), and `by_people` has each layout's p99s apart.
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
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import RedisError

from ..cliargs import bench_options, int_list
from ..contracts.streams import NewMatch, Seat
from ..platform.procs import cpu_seconds
from ..platform.up import Platform, Running, UpConfig
from ..play.identity import Sessions
from ..ports import is_free
from ..redisinfra.redis_client import connect
from ..tournaments.matches import Games, bot_match
from . import kit
from .engine import random_games

P99_BUDGET_MS = 150.0  # issue 44's goal for 100 people
SEAT_TTL_MS = 3600_000  # a directly seated person's seat token


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


class Host:
    """Seats the bench's people directly (the default): the person's session gets the seat
    (`Sessions.seat_at`, as the web server's tournaments seat a person) and the match goes to
    the engines on `arena:matches`: no round trip to the matchmaker per table."""

    def __init__(self, run: Running, secret: bytes, ruleset: str, players: int) -> None:
        self.client = connect(run.redis_url)
        self.sessions = Sessions(self.client, run.namespace, secret)
        self.games = Games(self.client, run.namespace, None)
        self.ruleset, self.players = ruleset, players
        self.count = 0

    async def seat(self, person: Person) -> None:
        """A new table for `person`: one person and random bots, the person's seat moving."""
        self.count += 1
        game, seat = f"bp-{person.idx}-{self.count}", self.count % self.players
        seats = [Seat("bot:random", True) for _ in range(self.players)]
        seats[seat] = Seat(person.player, False, person.name)
        match = NewMatch(match_id=game, ruleset=self.ruleset, seats=seats, seed=self.count)
        await self.sessions.seat_at(person.player, game, seat, SEAT_TTL_MS)
        await self.games.publish(match)

    async def close(self) -> None:
        """Close the Redis client."""
        await self.client.aclose()


class BotGames:
    """Keeps `n` all-bot games running at full speed (random bots), and can let them run out
    (`drain`: no new one until `resume`), so that the people can be measured alone."""

    def __init__(self, run: Running, n: int) -> None:
        self.client = connect(run.redis_url)
        self.games = Games(self.client, run.namespace, None)
        self.n, self.live, self.count = n, set[str](), 0
        self.people: set[str] = set()  # the games people sat down in (Person)
        self.playing = True

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop`: top the live games up to `n` (while playing), note the finished."""
        await self.games.mark()
        try:
            while not stop.is_set():
                while self.playing and len(self.live) < self.n:
                    self.count += 1
                    game = f"bench-bots-{self.count}"
                    await self.games.publish(
                        bot_match(game, "standard", ["random"] * 5, self.count)
                    )
                    self.live.add(game)
                ended = await self.games.finished(block_ms=200)
                self.live.difference_update(ended)
                self.people.difference_update(ended)
        finally:
            await self.client.aclose()

    async def drain(self, people: bool = False, timeout_s: float = 120.0) -> None:
        """No new bot game; wait until those in play have ended (with `people`: the people's
        games the bench seated too, played out by their bots once the people left)."""
        self.playing = False
        until = time.monotonic() + timeout_s
        while (self.live or (people and self.people)) and time.monotonic() < until:
            await asyncio.sleep(0.2)
        if self.live or (people and self.people):
            left = len(self.live) + (len(self.people) if people else 0)
            raise RuntimeError(f"{left} games still running after {timeout_s:.0f} s")

    def resume(self) -> None:
        """Keep `n` bot games running again."""
        self.playing = True


class Person:
    """One simulated person: sits down, plays tables out, records answer latencies."""

    def __init__(
        self,
        http: Http,
        idx: int,
        settings: dict[str, Any],
        think_s: float,
        host: Host | None,
        games: BotGames,
    ) -> None:
        self.http, self.idx, self.settings, self.think_s = http, idx, settings, think_s
        self.host = host  # None: the person opens its tables through the play API
        self.all_games = games  # told of each game the person sits in (to wait for its end)
        self.rng = random.Random(idx)
        self.token, self.player, self.name = "", "", f"bench {idx}"
        self.latencies: list[float] = []
        self.posts: list[float] = []  # an answer's POST to its response (the engine's reply)
        self.answers = 0  # answers the engine took (POST 2xx)
        self.table_ms: list[float] = []  # asking for a table -> seated
        self.table_errors: list[str] = []
        self.sent_at: float | None = None
        self.seat: tuple[str, int] | None = None
        self.games = 0

    def clear(self) -> None:
        """Start counting afresh (the measured window begins)."""
        self.latencies.clear()
        self.posts.clear()
        self.table_ms.clear()
        self.answers = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Play tables until `stop`, then resign the current one (its bot finishes it)."""
        guest = await self.http.call("POST", "/api/guests", {"name": self.name})
        self.token, self.player = guest["token"], guest["player"]
        try:
            while not stop.is_set():
                asked = time.perf_counter()
                try:
                    if self.host is not None:
                        await self.host.seat(self)
                    else:
                        await self.http.call("POST", "/api/tables", self.settings, self.token)
                except (RuntimeError, OSError, RedisError) as exc:  # counted; tried again
                    self.table_errors.append(repr(exc))
                    await asyncio.sleep(1.0)
                    continue
                self.seat = await self._seated()
                self.all_games.people.add(self.seat[0])
                self.table_ms.append(time.perf_counter() - asked)
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
        self.sent_at = sent = time.perf_counter()
        try:
            await self.http.call(
                "POST", path + "/answer", {"decision": d["id"], "picks": picks}, self.token
            )
        except RuntimeError:
            self.sent_at = None  # refused (a duplicate of a decision already moved on)
        else:
            self.answers += 1
            self.posts.append(time.perf_counter() - sent)


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1000, 2) if xs else 0.0


class Meter:
    """The platform's processes' CPU seconds and the engines' decisions, read together."""

    def __init__(
        self, procs: dict[str, int], engine_metrics: list[str], web_metrics: Sequence[str] = ()
    ) -> None:
        self.procs, self.urls, self.web = procs, engine_metrics, list(web_metrics)

    async def read(self) -> tuple[float, dict[str, float], int]:
        """(monotonic seconds, CPU seconds per process, decisions the engines took so far)."""
        decisions = sum(await asyncio.gather(*(asyncio.to_thread(_actions, u) for u in self.urls)))
        cpu = {n: cpu_seconds(p) for n, p in self.procs.items()}
        return time.perf_counter(), cpu, decisions

    @staticmethod
    def window(
        a: tuple[float, dict[str, float], int], b: tuple[float, dict[str, float], int]
    ) -> dict[str, Any]:
        """What happened between two readings."""
        wall = max(b[0] - a[0], 1e-9)
        used = {n: b[1][n] - a[1][n] for n in a[1]}
        return {
            "seconds": wall,
            "cpu_s": sum(used.values()),
            "cpu_share": {n: round(c / wall, 3) for n, c in used.items()},
            "decisions": b[2] - a[2],
        }


def _actions(url: str) -> int:
    """Answers an engine has accepted so far (`arena_engine_actions_total{result="ok"}`)."""
    return sum(
        v for (_, label), v in _samples(url, "arena_engine_actions", "result") if label == "ok"
    )


def _seat_decisions(urls: list[str]) -> dict[str, int]:
    """How the people's seats were told what is pending so far, by source (the web server's
    `arena_replay_seat_decisions_total`: asked of the engine, its reply to an answer, its mark)."""
    out: dict[str, int] = {}
    for url in urls:
        for (_, source), n in _samples(url, "arena_replay_seat_decisions", "source"):
            out[source] = out.get(source, 0) + n
    return out


def _tables(url: str) -> dict[str, int]:
    """Answers an engine has logged so far by table, people's or bot-only
    (`arena_engine_table_answers_total{table=...}`): where each kind of game was served."""
    return {label: n for (_, label), n in _samples(url, "arena_engine_table_answers", "table")}


def _samples(url: str, name: str, label: str) -> list[tuple[tuple[str, str], int]]:
    """The `_total` samples of counter `name` on an engine's /metrics, by `label`'s value."""
    with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 - the bench's own engine
        text = r.read().decode()
    for family in text_string_to_metric_families(text):
        if family.name == name:
            return [
                ((name, s.labels.get(label, "")), int(s.value))
                for s in family.samples
                if s.name.endswith("_total")
            ]
    return []


async def _step(
    base: str,
    people: int,
    args: argparse.Namespace,
    settings: dict[str, Any],
    host: Host | None,
    meter: Meter,
    bots: BotGames,
) -> dict[str, Any]:
    """One step: the bot games alone, then the people beside them (their latency), then the
    people alone once the bot games have run out (their CPU), the bot games resumed after."""
    alone = await _window(meter, args.bots_seconds)
    http = Http(base)
    stop = asyncio.Event()
    think_s = args.person_think_ms / 1000
    crowd = [Person(http, i, settings, think_s, host, bots) for i in range(people)]
    tasks = [asyncio.create_task(p.run(stop)) for p in crowd]
    await asyncio.sleep(min(5.0, args.seconds / 4))  # sit down and get the first decisions
    beside = await _measured(crowd, meter, args.seconds)
    # where each kind of game was served so far: with people's engines, the people's games on
    # them and the bot-only games on the others (the engines in `arena up`'s order)
    tables = await asyncio.gather(*(asyncio.to_thread(_tables, u) for u in meter.urls))
    await bots.drain()
    by_themselves = await _measured(crowd, meter, args.alone_seconds)
    stop.set()  # people resign (their bots finish the games); a stream left idle is cut
    _, late = await asyncio.wait(tasks, timeout=20)
    for t in late:
        t.cancel()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    await bots.drain(people=True)  # (the people's games, played out by their bots, end too)
    idle = await _window(meter, args.idle_seconds)  # nobody plays: what the platform costs idle
    bots.resume()
    net = by_themselves["cpu_s"] - idle["cpu_s"] * by_themselves["seconds"] / idle["seconds"]
    answered = max(by_themselves["people"]["answers"], 1)
    errors = [repr(e) for e in done if isinstance(e, Exception)]
    table_errors = [e for p in crowd for e in p.table_errors]
    return {
        "people": people,
        "tables": "play API (matchmaker)" if host is None else "seated by the bench",
        **beside["people"],
        "games_finished": sum(p.games for p in crowd),
        "table_errors": len(table_errors),
        "errors_total": len(errors),  # people whose run failed (could not sit down, say)
        "errors": (errors + table_errors)[:3],
        "bot_decisions_per_s_beside_people": round(
            max(beside["decisions"] - beside["people"]["answers"], 0) / beside["seconds"], 1
        ),
        "cpu_share": beside["cpu_share"],
        "loadavg_1m": beside["loadavg_1m"],
        "table_answers_by_engine": {f"engine-{i}": t for i, t in enumerate(tables)},
        "bots_alone": {
            "seconds": round(alone["seconds"], 2),
            "decisions_per_s": round(alone["decisions"] / alone["seconds"], 1),
            "platform_cpu_us_per_decision": round(
                alone["cpu_s"] * 1e6 / max(alone["decisions"], 1), 1
            ),
            "cpu_share": alone["cpu_share"],
            "loadavg_1m": alone["loadavg_1m"],
        },
        "people_alone": {
            **by_themselves["people"],
            "decisions_per_person_answer": round(
                by_themselves["decisions"] / max(by_themselves["people"]["answers"], 1), 2
            ),
            "platform_cpu_us_per_person_answer": round(net * 1e6 / answered, 1),
            "with_idle_cpu_us_per_person_answer": round(by_themselves["cpu_s"] * 1e6 / answered, 1),
            "cpu_share": by_themselves["cpu_share"],
            "loadavg_1m": by_themselves["loadavg_1m"],
        },
        "idle": {
            "seconds": round(idle["seconds"], 2),
            "platform_cpu_share": round(idle["cpu_s"] / idle["seconds"], 3),
            "cpu_share": idle["cpu_share"],
        },
    }


async def _window(meter: Meter, seconds: float) -> dict[str, Any]:
    """The platform's CPU and decisions over `seconds` from now, with the load average."""
    load = os.getloadavg()[0]
    before = await meter.read()
    await asyncio.sleep(seconds)
    w = Meter.window(before, await meter.read())
    w["loadavg_1m"] = [round(load, 2), round(os.getloadavg()[0], 2)]
    return w


async def _measured(crowd: list[Person], meter: Meter, seconds: float) -> dict[str, Any]:
    """`_window` with what the people did in it: answers, latencies, time to sit down."""
    for p in crowd:
        p.clear()
    told = await asyncio.to_thread(_seat_decisions, meter.web)
    w = await _window(meter, seconds)
    after = await asyncio.to_thread(_seat_decisions, meter.web)
    lat = [x for p in crowd for x in p.latencies]
    posts = [x for p in crowd for x in p.posts]
    answers = sum(p.answers for p in crowd)
    seated = [x for p in crowd for x in p.table_ms]
    w["people"] = {
        "answers": answers,
        "answers_per_s": round(answers / w["seconds"], 2),
        "latency_ms": {
            "p50": _pct(lat, 0.50),
            "p90": _pct(lat, 0.90),
            "p99": _pct(lat, 0.99),
            "max": _pct(lat, 1.0),
        },
        # (how much of it the POST took: the web server, the engine's SubmitAction and back)
        "answer_post_ms": {"p50": _pct(posts, 0.5), "p99": _pct(posts, 0.99)},
        "seated_ms": {"p50": _pct(seated, 0.5), "p99": _pct(seated, 0.99), "n": len(seated)},
        # how the seats learned what is pending meanwhile: GetDecision calls ("engine") against
        # the engine's reply to the person's answer and its marks beside the log
        "seat_decisions": {k: n - told.get(k, 0) for k, n in after.items()},
        "seconds": round(w["seconds"], 2),
    }
    return w


def _free_base(count: int) -> int:
    """A port base with `count` free ports above it at +0.. and +100.. (the engines' and the
    bot workers' /metrics, as `arena up` numbers them)."""
    for _ in range(200):
        base = random.randint(20_000, 40_000)
        ports = [base + i for i in range(count)] + [base + 100 + i for i in range(count)]
        if all(is_free(port) for port in ports):
            return base
    raise RuntimeError("no free ports for the workers' /metrics")


def layouts(text: str) -> list[tuple[int, int]]:
    """An argparse type: engine layouts, ``E+P[,E+P...]``: E engines that take the matches and
    the bot-only games, P people's engines (``arena engine --role people``); ``E`` alone is
    ``E+0`` (every engine serves every game, as before people's engines)."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        e, _, p = part.partition("+")
        try:
            engines, people = int(e), int(p or 0)
        except ValueError:
            engines, people = 0, -1
        if engines < 1 or people < 0:
            raise argparse.ArgumentTypeError(
                f"want E+P layouts (E >= 1 engines, P >= 0 people's engines), e.g. 2+0,1+1 "
                f"(got {part!r})"
            )
        out.append((engines, people))
    if not out:
        raise argparse.ArgumentTypeError("want at least one E+P layout, e.g. 2+0,1+1")
    return out


def _name(layout: tuple[int, int]) -> str:
    return f"{layout[0]}+{layout[1]}"


def bench_play(args: argparse.Namespace) -> dict[str, Any]:
    """Run every step of `args.people` on each engine layout; the report.

    One layout (`--engines`, `--people-engines`): one platform, `--repeat` rounds over the
    people counts in it. Several (`--layouts`): `--repeat` rounds, each starting a platform of
    each layout in turn and running the people counts once on it, so the layouts alternate
    under the machine's changing load."""
    env = kit.Envelope("play")
    peer = kit.timed(lambda: random_games(args.ruleset, args.players, 20, 1))
    chosen = args.layouts or [(args.engines, args.people_engines)]
    if len(chosen) == 1:
        steps = _platform(args, chosen[0], args.repeat)
    else:
        steps = [s for _ in range(args.repeat) for lay in chosen for s in _platform(args, lay, 1)]
    held = [
        s["people"]
        for s in steps
        if s["answers"]
        and not s["errors"]
        and not s["table_errors"]
        and s["latency_ms"]["p99"] <= P99_BUDGET_MS
    ]
    in_process = peer.cpu_us_per_unit
    return env.wrap(
        {
            "bot_games": args.bot_games,
            "bot_think_ms": args.bot_think_ms,
            "person_think_ms": args.person_think_ms,
            "table": f"{args.ruleset}-{args.players}: one person, random bots in the other seats",
            "tables": "play API (matchmaker)" if args.tables else "seated by the bench",
            "engines": chosen[0][0],
            "people_engines": chosen[0][1],
            "layouts": [_name(lay) for lay in chosen],
            "bot_workers": args.bots,
            "cores": os.cpu_count(),
            "in_process_cpu_us_per_decision": round(in_process, 2),
            "steps": steps,
            "people_held_p99_under_150ms": max(held, default=0),
            "by_people": [
                {
                    "layout": _name(lay),
                    "people": n,
                    "repeats": len(rs),
                    "p99_ms": kit.spread([s["latency_ms"]["p99"] for s in rs], 2),
                    "p99_ms_each": [s["latency_ms"]["p99"] for s in rs],
                    "loadavg_1m_each": [s["loadavg_1m"] for s in rs],
                    "p99_ms_alone": kit.spread(
                        [s["people_alone"]["latency_ms"]["p99"] for s in rs], 2
                    ),
                    "platform_cpu_us_per_person_answer": kit.spread(
                        [s["people_alone"]["platform_cpu_us_per_person_answer"] for s in rs], 1
                    ),
                    "person_answer_vs_in_process_decision": kit.spread(
                        [
                            s["people_alone"]["platform_cpu_us_per_person_answer"] / in_process
                            for s in rs
                        ],
                        1,
                    ),
                    "platform_cpu_us_per_bot_decision": kit.spread(
                        [s["bots_alone"]["platform_cpu_us_per_decision"] for s in rs], 1
                    ),
                    "bot_decisions_per_s_beside_people": kit.spread(
                        [s["bot_decisions_per_s_beside_people"] for s in rs], 1
                    ),
                    "table_errors": sum(s["table_errors"] for s in rs),
                }
                for lay in chosen
                for n in args.people
                if (rs := [s for s in steps if s["people"] == n and s["layout"] == _name(lay)])
            ],
        }
    )


def _platform(
    args: argparse.Namespace, layout: tuple[int, int], rounds: int
) -> list[dict[str, Any]]:
    """A platform of `layout` (engines, people's engines); `rounds` over the people counts."""
    engines, people = layout
    with tempfile.TemporaryDirectory(prefix="arena-bench-play-") as tmp:
        cfg = UpConfig(
            engines=engines,
            people_engines=people,
            bots=args.bots,
            var_dir=Path(tmp),
            namespace=f"bench-play-{os.getpid()}-{engines}-{people}-{random.randrange(1 << 24):x}",
            redis_url=args.redis_url,
            persist=False,
            http_port=0,
            replay_grpc_port=0,
            matchmaker_port=0,
            engine_port=0,
            metrics_port=_free_base(max(engines + people, args.bots)),
            matchmaker_metrics_port=0,
            replay_metrics_port=0,
            think_ms=args.bot_think_ms,
            bot_nice=args.bot_nice,
        )
        with Platform(cfg) as platform:
            run = platform.start()
            assert run.viewer_url is not None
            base = run.viewer_url.rstrip("/")
            procs = {c.name: c.pid for c in platform.sup.children}
            niced = {c.name: c.nice for c in platform.sup.children if c.nice}
            if platform.redis is not None:
                procs["redis"] = platform.redis.pid
            settings = {
                "ruleset": args.ruleset,
                "players": args.players,
                "bot_after_ms": 1,
                "bot_level": "random",
                "hosted_after": 0,
            }
            meter = Meter(procs, run.metrics[: engines + people], run.metrics[engines + people :])
            secret = platform.secret["ARENA_SECRET"].encode()
            steps = asyncio.run(_steps(run, base, args, settings, meter, secret, rounds))
    for s in steps:
        s["layout"] = _name(layout)
        s["niced"] = niced  # the processes arena up started below the others (--bot-nice)
    return steps


async def _steps(
    run: Running,
    base: str,
    args: argparse.Namespace,
    settings: dict[str, Any],
    meter: Meter,
    secret: bytes,
    rounds: int,
) -> list[dict[str, Any]]:
    stop = asyncio.Event()
    games = BotGames(run, args.bot_games)
    bots = asyncio.create_task(games.run(stop))
    host = None if args.tables else Host(run, secret, args.ruleset, args.players)
    await asyncio.sleep(3)  # the bot games under way
    out = []
    try:
        for people in [n for _ in range(rounds) for n in args.people]:  # 10, 25, 10, 25
            step = await _step(base, people, args, settings, host, meter, games)
            out.append(step)
            print(json.dumps(step), file=sys.stderr, flush=True)
    finally:
        stop.set()
        await bots
        if host is not None:
            await host.close()
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench play` options."""
    bench_options(p)
    # the defaults finish in about a minute; docs/benchmarks.md names the flags of each figure
    p.add_argument("--people", type=int_list, default="10,25", help="simulated people per step")
    p.add_argument("--seconds", type=float, default=10.0, help="measured time per step")
    p.add_argument(
        "--bots-seconds",
        type=float,
        default=5.0,
        help="the bot games alone before each step (their CPU per decision)",
    )
    p.add_argument(
        "--idle-seconds",
        type=float,
        default=3.0,
        help="the platform with nobody playing after each step (its CPU is taken off the people's)",
    )
    p.add_argument(
        "--alone-seconds",
        type=float,
        default=5.0,
        help="the people alone after each step, once the bot games ran out (their CPU)",
    )
    p.add_argument("--repeat", type=int, default=1, help="rounds over the people counts")
    p.add_argument("--bot-games", type=int, default=20, help="all-bot games kept running")
    p.add_argument("--bot-think-ms", type=int, default=0, help="each bot's pause before it answers")
    p.add_argument(
        "--person-think-ms",
        type=int,
        default=300,
        help="a person's mean pause before answering (uniform in 0.5x-1.5x)",
    )
    p.add_argument(
        "--tables",
        action="store_true",
        help="people open their tables through the play API (the matchmaker), as the page "
        "does, instead of being seated by the bench",
    )
    p.add_argument("--ruleset", default="standard", help="the people's tables")
    p.add_argument("--players", type=int, default=5, help="seats at a person's table")
    p.add_argument(
        "--engines",
        type=int,
        default=1,
        help="engine worker processes (that take the matches and the bot-only games)",
    )
    p.add_argument(
        "--people-engines",
        type=int,
        default=0,
        help="people's engines besides (arena engine --role people): the people's games are "
        "served there, apart from the bot-only games",
    )
    p.add_argument(
        "--layouts",
        type=layouts,
        default=None,
        metavar="E+P[,E+P...]",
        help="engine layouts to alternate in one run (overrides --engines and "
        "--people-engines): E engines and P people's engines each, a fresh platform for each "
        "layout in each of --repeat rounds; e.g. 2+0,1+1 compares two engines sharing every "
        "game with one for the bot games and one for the people's (default: the one layout "
        "--engines and --people-engines give)",
    )
    p.add_argument("--bots", type=int, default=1, help="bot worker processes")
    p.add_argument(
        "--bot-nice",
        type=int,
        default=0,
        metavar="N",
        help="as arena up --bot-nice: the bot-only engines this many steps below the others' "
        "priority in layouts with people's engines (default 0: none)",
    )


def main(args: argparse.Namespace) -> int:
    """`arena bench play`: print the JSON report."""
    refused = (
        args.repeat < 1
        or args.seconds <= 0
        or args.bots_seconds <= 0
        or args.alone_seconds <= 0
        or args.idle_seconds <= 0
        or not args.people
        or min(args.people) < 1
        or args.engines < 1
        or args.people_engines < 0
        or not 0 <= args.bot_nice <= 19
    )
    said = (
        "--repeat, --seconds, --bots-seconds, --alone-seconds, --people and --engines must be "
        "positive (--people-engines 0 or more, --bot-nice 0 to 19)"
    )
    return kit.report("play", lambda: bench_play(args), said if refused else "")
