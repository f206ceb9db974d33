"""`arena bench e2e`: the same seeded games in-process and through the platform.

In-process: the rules engine and the policy in one loop (no I/O). Through the platform: engine
and bot workers as processes, a real redis-server, real gRPC, every game logged, hash-chained,
archived to a file; the bench process only publishes the matches (all at once, as a tournament
does) and waits on `{ns}:finished`. Each platform run gets a fresh Redis and fresh workers.
The runs are interleaved: `repeat` rounds of (in-process, platform with each engine count), and
each platform run's ratio is to the in-process run of its own round (services/bench/kit.py).

CPU per decision (`cpu_us_per_decision`): each platform process's CPU seconds over the timed
window (from /proc; Redis from INFO cpu when the bench did not start it) divided by the answers
logged in the timed games' archives, per process and in total; the bench process that only
publishes and waits is reported apart (`driver_cpu_us_per_decision`), not in the total.

What each run reports beside games/s: CPU seconds of every process over the timed window (a
worker near 100 % of a core is the bottleneck of a single-threaded Python process; a sum near
the machine's cores means the machine is), and what the workers said when they stopped: how
many answers travelled per SubmitActions call and per Redis pipeline, and the mean time a bot
held a decision and the engine an answer (their exit lines, services/*/worker.py).

Memory per live game (`memory_kb_per_live_game`): every game of a run is published at once, so
all are in flight from the start; each process's resident set (VmRSS, sampled every 0.2 s
while the games play, Redis's too when the bench started it) at its peak less its value
before the games were published, over the number of games. It is what a game held in flight costs (the
engine's hot copy, the bot worker's seats, the log in Redis); compare it across `--games`.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..bots.cluster import answers
from ..bots.selfplay import play_game
from ..contracts.streams import NewMatch
from ..eventlog.archive import SUFFIX
from ..platform.procs import cpu_seconds
from ..platform.up import Platform, Running, UpConfig
from ..redisinfra.redis_client import connect
from ..tournaments.matches import Games, bot_match
from . import kit
from .engine import random_games
from .kit import Sample

WARMUP = 2


def _in_process_once(ruleset: str, players: int, games: int, seed: int, policy: str) -> int:
    """Play the games in this process; returns the decisions taken."""
    decisions = 0
    for i in range(games):
        if policy == "random":
            decisions += random_games(ruleset, players, 1, seed + i)
        else:
            _, counts = play_game(ruleset, players, seed + i, [policy])
            decisions += counts["decisions"]
    return decisions


def in_process(ruleset: str, players: int, games: int, seed: int, policy: str) -> Sample:
    """One in-process run of the seeded games (random: engine + policy; heuristic: with every
    seat's view folded, as the bot service does), timed in wall and CPU seconds."""
    return kit.timed(lambda: _in_process_once(ruleset, players, games, seed, policy))


async def _drive(run: Running, ids: list[str], matches: list[NewMatch], timeout: float) -> None:
    client = connect(run.redis_url)
    try:
        games = Games(client, run.namespace, None)
        await games.mark()
        for m in matches:
            await games.publish(m)
        left = set(ids)
        deadline = time.monotonic() + timeout
        while left:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{len(left)} of {len(ids)} games unfinished after {timeout:.0f} s"
                )
            left.difference_update(await games.finished(block_ms=500))
    finally:
        await client.aclose()


def through_platform(
    ruleset: str,
    players: int,
    games: int,
    seed: int,
    policy: str,
    engines: int,
    bots: int,
    redis_url: str | None,
    redis_cluster: int = 0,
) -> dict[str, Any]:
    """games/s through `engines` engine workers and `bots` bot workers, and CPU per process
    (with `redis_cluster` N: on a local cluster of N masters, CPU per node as
    `redis-master-i` / `redis-replica-i`)."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        cfg = UpConfig(
            engines=engines,
            bots=bots,
            var_dir=Path(tmp),
            persist=False,
            redis_url=redis_url,
            redis_cluster=redis_cluster,
            matchmaker=False,
            replay=False,
            engine_port=0,
            metrics_port=0,
            bot_policy=policy,
            namespace=f"bench-{os.getpid()}-{engines}",
        )
        with Platform(cfg) as platform:
            run = platform.start()
            seats = [policy] * players
            warm = [bot_match(f"warm-{i}", ruleset, seats, 10_000 + i) for i in range(WARMUP)]
            asyncio.run(_drive(run, [m.match_id for m in warm], warm, 120))
            procs = {c.name: c.pid for c in platform.sup.children}
            if platform.redis is not None:
                procs["redis"] = platform.redis.pid
            roles: dict[str, str] = {}
            if platform.cluster is not None:  # named by role and order: runs compare
                seen: dict[str, int] = {}
                for port, role in sorted(platform.cluster.roles().items()):
                    kind = "master" if role == "master" else "replica"
                    seen[kind] = seen.get(kind, 0) + 1
                    name = f"redis-{kind}-{seen[kind]}"
                    procs[name] = platform.cluster.processes[port].pid
                    roles[name] = f"127.0.0.1:{port}"
            ms = [bot_match(f"g-{i}", ruleset, seats, seed + i) for i in range(games)]
            load = os.getloadavg()[0]
            cpu0 = {n: cpu_seconds(p) for n, p in procs.items()}
            if "redis" not in procs and not roles:
                cpu0["redis"] = asyncio.run(_redis_cpu_at(run.redis_url))
            me0 = kit.cpu_seconds()
            t0 = time.perf_counter()
            with _Peaks(procs) as peaks:
                asyncio.run(_drive(run, [m.match_id for m in ms], ms, 60 + 10 * games))
            secs = time.perf_counter() - t0
            me = kit.cpu_seconds() - me0
            used = {n: cpu_seconds(p) - cpu0[n] for n, p in procs.items()}
            if "redis" not in procs and not roles:
                used["redis"] = asyncio.run(_redis_cpu_at(run.redis_url)) - cpu0["redis"]
            decisions = _answers_logged(Path(run.archive_dir), [m.match_id for m in ms])
            redis_version = asyncio.run(_redis_version(run.redis_url))
        workers = worker_reports(Path(tmp) / "logs")  # written as the workers stopped
    per = max(decisions, 1)
    cpu_us = {n: round(c * 1e6 / per, 1) for n, c in sorted(used.items())}
    cpu_us["total"] = round(sum(used.values()) * 1e6 / per, 1)
    cpu = {n: round(c / secs, 3) for n, c in used.items()}
    return {
        "engines": engines,
        "bots": bots,
        "games": games,
        "decisions": decisions,
        "seconds": round(secs, 3),
        "games_per_s": round(games / secs, 3),
        "cpu_us_per_decision": cpu_us,
        "cpu_share": cpu,
        "driver_cpu_us_per_decision": round(me * 1e6 / per, 1),
        "loadavg_1m_before": round(load, 2),
        "redis_version": redis_version,
        **({"redis_roles": roles} if roles else {}),
        "bottleneck": bottleneck(cpu),
        "memory_kb_per_live_game": {
            n: round(kb / max(games, 1), 1) for n, kb in sorted(peaks.grown_kb().items())
        },
        "workers": workers,
    }


def rss_kb(pid: int) -> int:
    """A process's resident set (kB; 0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class _Peaks:
    """Each process's peak resident set while a run plays, sampled from a thread of its own."""

    def __init__(self, procs: dict[str, int], every_s: float = 0.2) -> None:
        self.procs, self.every_s = procs, every_s
        self.before = {n: rss_kb(p) for n, p in procs.items()}
        self.peak = dict(self.before)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.done.wait(self.every_s):
            for n, p in self.procs.items():
                self.peak[n] = max(self.peak[n], rss_kb(p))

    def grown_kb(self) -> dict[str, int]:
        """Peak less before, per process (kB)."""
        return {n: max(0, self.peak[n] - self.before[n]) for n in self.procs}

    def __enter__(self) -> _Peaks:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def _answers_logged(archive: Path, games: list[str], wait_s: float = 30) -> int:
    """The answers in the games' archive files (a game is announced finished before its worker
    has written the file: wait for each a little)."""
    total = 0
    deadline = time.monotonic() + wait_s
    for game in games:
        path = archive / f"{game}{SUFFIX}"
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not path.exists():
            raise RuntimeError(f"game {game} finished but no archive file after {wait_s:.0f} s")
        total += len(answers(path))
    return total


async def _redis_version(url: str) -> str:
    """The server's version (its Lua and reply costs differ between 6.2 and 7)."""
    client = connect(url)
    try:
        info: Any = await client.info("server")
        if "redis_version" not in info:  # a cluster client: per node
            info = next((v for v in info.values() if isinstance(v, dict)), {})
        return str(info.get("redis_version", "?"))
    finally:
        await client.aclose()


async def _redis_cpu_at(url: str) -> float:
    client = connect(url)
    try:
        return await kit.redis_cpu_seconds(client)
    finally:
        await client.aclose()


def worker_reports(log_dir: Path) -> dict[str, Any]:
    """Batch sizes and mean latencies from the workers' last log lines (warm-up included)."""
    out: dict[str, Any] = {}
    for path in sorted(log_dir.glob("*.log")):
        for line in reversed(path.read_text(encoding="utf-8", errors="replace").splitlines()):
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if isinstance(report, dict) and "batched" in report:
                out[path.stem] = _summary(report)
                break
    return out


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    b = report["batched"]
    if "answers" in b:  # a bot worker
        on_sessions = b.get("session_answers", 0)
        return {
            "answers": b["answers"] + on_sessions,
            "answers_per_submit_call": round(b["answers"] / max(b["submit_calls"], 1), 1),
            "answers_on_sessions": on_sessions,
            "answers_per_session_message": round(
                on_sessions / max(b.get("session_messages", 0), 1), 1
            ),
            "decisions_pushed": b.get("pushed", 0),
            "decision_held_ms_mean": report.get("answer_ms_mean"),
        }
    appends, calls = b.get("appends", {}), b.get("append_calls", {})
    return {
        "appends": calls.get("appends", appends.get("commands", 0)),
        "appends_per_script_call": round(
            calls.get("appends", 0) / max(calls.get("calls", 0), 1), 1
        ),
        "script_calls_per_pipeline": round(
            appends.get("commands", 0) / max(appends.get("pipelines", 0), 1), 1
        ),
        "decisions_pushed": b.get("session_pushes", 0),
        "decisions_per_session_message": round(
            b.get("session_pushes", 0) / max(b.get("session_messages", 0), 1), 1
        ),
        "answer_ms_mean": report.get("action_ms_mean"),
    }


def bottleneck(cpu: dict[str, float], cores: int | None = None) -> str:
    """Name what limited a run from each process's CPU share (1.0 = one core busy)."""
    cores = cores or os.cpu_count() or 1
    total = sum(cpu.values())
    top, share = max(cpu.items(), key=lambda kv: kv[1])
    kind = top.rsplit("-", 1)[0]
    if share >= 0.85:
        return f"{kind} ({top} used {share:.0%} of a core; one Python process is one core)"
    if total >= 0.85 * cores:
        return (
            f"the machine's {cores} cores ({total:.2f} cores busy in our processes; "
            f"largest: {top} {share:.0%})"
        )
    return (
        f"none saturated in our processes ({total:.2f} cores busy, largest {top} "
        f"{share:.0%}): waiting on round trips (gRPC, Redis) or on other load"
    )


def bench_e2e(
    ruleset: str,
    players: int,
    games: int,
    seed: int,
    policy: str,
    engine_counts: list[int],
    bots: int,
    redis_url: str | None,
    repeat: int = 3,
    redis_cluster: int = 0,
) -> dict[str, Any]:
    """The whole benchmark for one bot policy as JSON-ready data: ``repeat`` rounds, each the
    in-process run then one platform run per engine count (interleaved, so every ratio
    compares runs minutes apart at most); each platform ratio is to its own round's in-process
    run, reported per round and as median, min and max."""
    env = kit.Envelope("e2e")
    base: list[Sample] = []
    runs: dict[int, list[dict[str, Any]]] = {k: [] for k in engine_counts}
    for _ in range(repeat):
        base.append(in_process(ruleset, players, games, seed, policy))
        for k in engine_counts:
            r = through_platform(
                ruleset, players, games, seed, policy, k, bots, redis_url, redis_cluster
            )
            r["ratio_to_in_process"] = round(r["games_per_s"] / (games / base[-1].wall_s), 3)
            runs[k].append(r)
    platform: list[dict[str, Any]] = []
    for k, rs in runs.items():
        names = sorted(rs[0]["cpu_us_per_decision"])
        platform.append(
            {
                "engines": k,
                "bots": bots,
                "games": games,
                "repeats": len(rs),
                "games_per_s": kit.spread([r["games_per_s"] for r in rs]),
                "ratio_to_in_process": kit.spread([r["ratio_to_in_process"] for r in rs]),
                "cpu_us_per_decision": {
                    n: kit.spread([r["cpu_us_per_decision"][n] for r in rs], 1) for n in names
                },
                "runs": rs,
            }
        )
    out: dict[str, Any] = {
        "ruleset": ruleset,
        "players": players,
        "games": games,
        "seed": seed,
        "policy": policy,
        "in_process": {
            "games": games,
            "games_per_s": kit.spread([games / s.wall_s for s in base]),
            "decisions_per_game": round(base[0].units / max(games, 1), 1),
        }
        | kit.summary(base, "decisions"),
        "platform": platform,
    }
    by = {p["engines"]: p["runs"] for p in platform}
    if 1 in by and 2 in by:
        out["two_vs_one_engines"] = kit.spread(
            [b["games_per_s"] / a["games_per_s"] for a, b in zip(by[1], by[2], strict=True)]
        )
    return env.wrap(out)
