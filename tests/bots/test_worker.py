"""End to end: `arena engine` and `arena bots` processes on a real Redis, no human anywhere.

Two engine workers and two bot workers play concurrent all-bot games to the end; one bot worker
is killed with SIGKILL while it holds decisions. The engines are told not to re-publish
unanswered bot decisions for a minute, so only the recovery under test can rescue what the dead
one held: XAUTOCLAIM by the surviving worker (workers reading arena:decisions only), or the
engine handing the dead worker's session's decisions to the stream (workers on bot sessions).
Every game must finish, archive, and pass verify, with exactly one logged answer per decision.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis
from scrape_helpers import until_sessions_open

from services.bots.cluster import (
    SECRET,
    answers,
    archived,
    publish_matches,
    spawn_bots,
    start_bots,
    start_engines,
    stop,
)
from services.bots.engine_client import GrpcEngine
from services.contracts import tokens
from services.contracts.streams import (
    DEAD,
    DECISIONS,
    BotDecision,
    decode,
    game_key,
    partitions,
    stream_key,
    stream_keys,
)
from services.redisinfra.redis_client import connect
from services.redisinfra.server import free_port
from services.redisinfra.streams import ensure_group, publish
from services.rules import api
from services.rules.api import Decision
from services.verify import verify

GAMES = int(os.environ.get("ARENA_BOTS_E2E_GAMES", "4"))  # concurrent games in the kill test
PLAYERS = 4


async def _wait_archived(archive: Path, n: int, deadline: float) -> list[Path]:
    files: list[Path] = []
    while time.monotonic() < deadline:
        files = archived(archive)
        if len(files) >= n:
            break
        await asyncio.sleep(0.2)
    return files


def _check(files: list[Path], n: int) -> None:
    assert len(files) == n, f"{len(files)} of {n} games finished"
    for f in files:
        report = verify(f)
        assert report.ok, (f.name, report.divergence)
        ids = [a.decision for a in answers(f)]
        assert len(ids) == len(set(ids)), f"{f.name}: a decision answered twice"
        assert not any(a.auto for a in answers(f)), "the server answered for a bot"


async def _head(client: aioredis.Redis, ns: str, game: str) -> int:
    """The version of a game's log (the seq of its last entry)."""
    rows: Any = await client.xrevrange(game_key(ns, game, "log"), "+", "-", count=1)
    return int(rows[0][0].split(b"-")[0])


async def _pending(client: aioredis.Redis, ns: str, consumer: str) -> int:
    """Decisions messages `consumer` holds, over every partition."""
    held = 0
    for key in stream_keys(ns, DECISIONS.name):
        if await client.exists(key):
            rows: Any = await client.xpending_range(
                key, "bots", "-", "+", 100, consumername=consumer
            )
            held += len(rows)
    return held


def _redis_ports(pid: int) -> set[int]:
    """The local TCP ports of process `pid`'s sockets (its Redis connections among them), from
    /proc: its fds' socket inodes looked up in its network namespace's tables."""
    inodes: set[str] = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:  # (closed meanwhile)
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    ports: set[int] = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


async def _blocked_reads(client: aioredis.Redis, proc: subprocess.Popen[str], name: str) -> int:
    """How many of bot worker `proc`'s (consumer `name`) connections are blocked in Redis on an
    XREADGROUP: one a partition when it waits for new decisions. Its connections are told by
    their client name and their port (another test's worker may share the name and Redis)."""
    ports = _redis_ports(proc.pid)
    return sum(
        1
        for c in await client.client_list()
        if c.get("name") == f"arena-bots:{name}"
        and "b" in c.get("flags", "")
        and c.get("cmd") == "xreadgroup"
        and int(c["addr"].rsplit(":", 1)[1]) in ports
    )


async def _drained(client: aioredis.Redis, stream: str, group: str) -> bool:
    """Whether ``group`` has been handed every entry of ``stream`` and acked them all."""
    info: Any = await client.xinfo_groups(stream)
    g = next(g for g in info if g["name"] in (group, group.encode()))
    last: Any = await client.xrevrange(stream, "+", "-", count=1)
    return int(g["pending"]) == 0 and g["last-delivered-id"] == last[0][0]


async def test_two_engines_two_bots_one_bot_killed(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    ns, archive = redis_namespace, tmp_path / "archive"
    engines = start_engines(redis_url, ns, 2, archive, repost_ms=60_000)
    bots = start_bots(redis_url, ns, 2, [port for _, port in engines], "random", sessions=False)
    try:
        # b0 frozen while it waits in Redis for new decisions on every partition: the next
        # entry of a partition goes to the consumer that has waited longest there, b0 or, if
        # b1 waited longer, b0 after it (b1 waits again behind b0 once served). Frozen, b0
        # cannot ack what Redis hands it. Frozen before the matches are published, it holds
        # one of their first decisions, unless its reads time out (2 s) before a decision
        # comes: then it is thawed and frozen again once it waits anew, until it holds one.
        reads, waiting = partitions(), time.monotonic() + 30
        while await _blocked_reads(redis_client, bots[0], "b0") < reads:
            assert time.monotonic() < waiting, "bot worker b0 never waited on every partition"
            await asyncio.sleep(0.01)
        bots[0].send_signal(signal.SIGSTOP)
        await publish_matches(redis_client, ns, GAMES, PLAYERS, ["heuristic", "random"])
        deadline = time.monotonic() + 50
        held, frozen = 0, True
        while time.monotonic() < deadline and len(archived(archive)) < GAMES:
            # (looked at first: a read served while frozen is pending when asked next)
            blocked = await _blocked_reads(redis_client, bots[0], "b0")
            held = await _pending(redis_client, ns, "b0")
            if held:
                break
            if frozen and blocked < reads:  # reads timed out empty-handed: thaw, wait again
                bots[0].send_signal(signal.SIGCONT)
                frozen = False
            elif not frozen and blocked == reads:
                bots[0].send_signal(signal.SIGSTOP)
                frozen = True
            await asyncio.sleep(0.01)
        bots[0].send_signal(signal.SIGKILL)
        bots[0].wait()
        done = len(archived(archive))
        assert held > 0, f"the bot worker never held a message ({done} of {GAMES} games ended)"
        files = await _wait_archived(archive, GAMES, deadline)
        # a message the dead worker held for a decision already superseded (a window asked of
        # several seats, answered by another) blocks no game: the games may all finish before
        # the survivor's next claim round (every claim_idle_ms / 2) takes it over
        left = await _pending(redis_client, ns, "b0")
        recovery = time.monotonic() + 10
        while left and time.monotonic() < recovery:
            await asyncio.sleep(0.1)
            left = await _pending(redis_client, ns, "b0")
        assert left == 0, "the dead worker's messages stayed"
        assert bots[1].poll() is None, "the surviving bot worker died"
        _check(files, GAMES)
        assert await redis_client.xlen(f"{ns}:dead") == 0
    finally:
        exits = stop(bots + [p for p, _ in engines])
    outcomes = next(e["outcomes"] for e in exits if e.get("consumer") == "b1")
    assert outcomes.get("answered", 0) > 0


async def test_duplicated_messages_do_not_double_answer(
    redis_url: str,
    redis_namespace: str,
    redis_client: aioredis.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second SubmitAction for a decision is a no-op at the engine; then every decisions
    message is published twice, and each decision is still answered once. (One partition, so
    one stream holds every message; the workers inherit the setting.) The workers' outcomes are
    accounted exactly: fresh acceptances at most the logged answers, nothing poisoned or
    dead-lettered, every entry handled; a failure names every count."""
    monkeypatch.setenv("ARENA_PARTITIONS", "1")
    ns, archive = redis_namespace, tmp_path / "archive"
    [(engine, port)] = start_engines(redis_url, ns, 1, archive)
    stream = stream_key(ns, DECISIONS.name, 0)
    # a group that never reads: the engines' trimming (below every group's ack) keeps every
    # entry for this test's copying loop, however far behind a loaded machine makes it
    await ensure_group(redis_client, stream, "witness")
    bots: list[subprocess.Popen[str]] = []
    try:
        await publish_matches(redis_client, ns, 2, PLAYERS, ["random"], seed=900)
        reply: Any = await redis_client.xread({stream: "0-0"}, count=1, block=10_000)
        first = decode(reply[0][1][0][1], BotDecision)
        d = msgspec.json.decode(first.body, type=Decision)
        game = first.game
        token = tokens.issue(SECRET.encode(), game, d.seat)
        grpc_engine = GrpcEngine([f"127.0.0.1:{port}"])
        picks = list(api.default_answer(d).picks)
        once = await grpc_engine.submit(game, token, d.id, picks)
        again = await grpc_engine.submit(game, token, d.id, picks)
        other = await grpc_engine.submit(game, token, d.id, ["something else"])
        await grpc_engine.close()
        assert not once.duplicate and again.duplicate and other.duplicate
        assert once.version == again.version == other.version == await _head(redis_client, ns, game)
        bots = start_bots(redis_url, ns, 2, [port], "random", sessions=False)
        deadline = time.monotonic() + 40
        last, copied = "0-0", 0
        files: list[Path] = []
        caught_up = False
        while time.monotonic() < deadline and not (len(files) >= 2 and caught_up):
            # until both games are archived and every message is copied: on a loaded machine
            # the copier lags behind the bots (copies of a finished game's decisions are stale
            # to the workers, and still each handled once)
            reply: Any = await redis_client.xread({stream: last}, count=100, block=100)
            caught_up = not reply
            for _, rows in reply or []:
                for mid, fields in rows:
                    last = mid
                    if b"copy" not in fields:
                        await publish(redis_client, stream, {**fields, b"copy": b"1"})
                        copied += 1
            files = archived(archive)
        _check(files, 2)  # (each decision answered once in the logs, none by the server)
        logged = sum(len(answers(f)) for f in files)
        assert copied >= logged
        # every copy handled before the workers stop (else its outcome is not counted below)
        while not await _drained(redis_client, stream, "bots"):
            assert time.monotonic() < deadline, "the bot workers left decisions unhandled"
            await asyncio.sleep(0.05)
        entries = int(await redis_client.xlen(stream))  # (the witness group keeps them all)
        dead = int(await redis_client.xlen(stream_key(ns, DEAD)))
    finally:
        exits = stop(bots + [engine])
    seen: dict[str, int] = {}
    for e in exits:
        for k, v in e.get("outcomes", {}).items():
            seen[k] = seen.get(k, 0) + v
    said = f"{copied} copies, {entries} entries, {logged} answers logged, {dead} dead: {seen}"
    # a copy is never answered twice at the engine: the workers' fresh acceptances are at most
    # the logged answers but the test's own (a copy "answered" again would be one more) ...
    accepted = seen.get("answered", 0) + seen.get("fallback", 0)
    assert accepted <= logged - 1, said
    # ... nor refused for good, and every entry (originals and copies) got an outcome
    assert seen.get("poison", 0) == 0 and dead == 0, said
    handled = sum(v for k, v in seen.items() if k != "retry")  # (a retry is handled again)
    assert handled >= entries, said
    # so each copy was skipped (this worker answered it), a no-op at the engine, or stale
    skipped = seen.get("known", 0) + seen.get("duplicate", 0) + seen.get("stale", 0)
    assert skipped >= entries - accepted >= copied, said


async def test_a_bot_killed_on_its_sessions_loses_nothing(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    """Bot workers on bot sessions. b0 plays alone at first, thinking 300 ms before each answer,
    so when it is killed mid-game it holds decisions pushed to it; b1 starts just before. With
    reposts ten minutes away, only the engines handing the dead sessions' decisions to
    arena:decisions at once (where b1 reads them) can finish the games. The finish has a
    deadline of its own from the kill (it once shared one with reaching mid-game and ran short
    on a loaded machine); it is far inside the reposts, so it still fails if nothing hands back."""
    ns, archive = redis_namespace, tmp_path / "archive"
    metrics = [free_port(), free_port()]
    engines = start_engines(redis_url, ns, 2, archive, repost_ms=600_000, metrics_ports=metrics)
    ports = [port for _, port in engines]
    slow = spawn_bots(redis_url, ns, "b0", ports, "random", 1000, True, 300)
    bots = [slow]
    try:
        assert slow.stdout is not None and slow.stdout.readline()  # consuming
        await until_sessions_open(metrics, 1)  # b0's, on both engines
        await publish_matches(redis_client, ns, GAMES, PLAYERS, ["heuristic", "random"])
        deadline = time.monotonic() + 50
        while time.monotonic() < deadline:  # mid-game
            heads = [await _head_or_0(redis_client, ns, f"{ns}-g{i}") for i in range(GAMES)]
            if min(heads) >= 40:
                break
            await asyncio.sleep(0.05)
        bots.append(spawn_bots(redis_url, ns, "b1", ports, "random", 1000, True, 0))
        assert bots[1].stdout is not None and bots[1].stdout.readline()
        slow.send_signal(signal.SIGKILL)
        slow.wait()
        files = await _wait_archived(archive, GAMES, time.monotonic() + 90)
        assert bots[1].poll() is None, "the surviving bot worker died"
        _check(files, GAMES)
    finally:
        exits = stop(bots + [p for p, _ in engines])
    engine_exits = [e for e in exits if "batched" in e and "session_pushes" in e["batched"]]
    assert sum(e["batched"]["session_handed_back"] for e in engine_exits) > 0
    survivor = next(e for e in exits if e.get("consumer") == "b1")
    assert survivor["outcomes"].get("answered", 0) > 0


async def test_a_worker_with_little_room_reads_its_sessions_on(
    redis_url: str, redis_namespace: str, tmp_path: Path
) -> None:
    """More games than room (--max-inflight 2): decisions pushed beyond it wait in the worker,
    and the session is read on meanwhile (the results that free the room come on it), so
    every game finishes (a worker that stopped reading until it had room stalled for good)."""
    worker = await _one_engine_one_bot(
        redis_url, redis_namespace, tmp_path, 8, PLAYERS, "random", 700, ("--max-inflight", "2")
    )
    assert worker["batched"]["pushed"] > 0


async def _one_engine_one_bot(
    redis_url: str,
    ns: str,
    tmp_path: Path,
    games: int,
    players: int,
    policy: str,
    seed: int,
    extra: tuple[str, ...] = (),
    timeout_s: float = 60,
) -> dict[str, Any]:
    """An engine and a bot worker (`extra`: its further options) play `games` all-bot games of
    `policy` (the worker's session open first) to their end; each is checked (`_check`). Returns
    the bot worker's exit line."""
    archive = tmp_path / "archive"
    metrics = [free_port()]
    engines = start_engines(redis_url, ns, 1, archive, repost_ms=60_000, metrics_ports=metrics)
    ports = [port for _, port in engines]
    bot = spawn_bots(redis_url, ns, "b0", ports, "random", 1000, True, 0, extra)
    client = connect(redis_url)
    try:
        assert bot.stdout is not None and bot.stdout.readline()
        await until_sessions_open(metrics, 1)
        await publish_matches(client, ns, games, players, [policy], seed=seed)
        files = await _wait_archived(archive, games, time.monotonic() + timeout_s)
        _check(files, games)
    finally:
        await client.aclose()
        exits = stop([bot] + [p for p, _ in engines])
    return next(e for e in exits if e.get("consumer") == "b0")


async def _head_or_0(client: aioredis.Redis, ns: str, game: str) -> int:
    rows: Any = await client.xrevrange(game_key(ns, game, "log"), "+", "-", count=1)
    return int(rows[0][0].split(b"-")[0]) if rows else 0


async def _hard_bots_over_grpc(
    redis_url: str, redis_namespace: str, tmp_path: Path, games: int
) -> None:
    worker = await _one_engine_one_bot(
        redis_url, redis_namespace, tmp_path, games, 5, "hard", 900, timeout_s=120
    )
    assert worker["worlds"].get("dealt", 0) > 0 and "refused" not in worker["worlds"], worker
    assert set(worker["outcomes"]) <= {"answered", "duplicate", "known"}, worker


async def test_hard_bots_search_on_worlds_dealt_over_grpc(
    redis_url: str, redis_namespace: str, tmp_path: Path
) -> None:
    """The hard level served: an `arena engine` and an `arena bots` process, a game whose
    every seat is `bot:hard`. At its key decisions the worker asks the engine for worlds
    (GameService.Determinize, real gRPC) and searches on them; the game ends and verifies,
    and no call was refused. One game: a 5-seat game of hard bots has many key decisions, each
    a Determinize call (two games under -m slow)."""
    await _hard_bots_over_grpc(redis_url, redis_namespace, tmp_path, 1)


@pytest.mark.slow
async def test_hard_bots_search_on_worlds_dealt_over_grpc_two_games(
    redis_url: str, redis_namespace: str, tmp_path: Path
) -> None:
    """The same with two games at once on the one worker."""
    await _hard_bots_over_grpc(redis_url, redis_namespace, tmp_path, 2)
