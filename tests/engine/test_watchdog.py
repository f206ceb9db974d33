"""No game is ever stuck (#39 item 2, #46 item 3).

- A bot seat that no bot worker answers (every one gone or wedged) is answered by the server's
  default once its deadline (the table's time per decision, plus a repost's grace) has passed,
  exactly as a silent person's seat is: the game goes on without any bot.
- A runaway game is ended by the platform at its cap on decisions or log entries: an
  `abandon` entry and game_ended (a draw, with the reason) in the log, then finished and
  archived; the archive verifies (the re-run ends it at the same point).
- The watchdog (engine/watchdog.py) finds a live log that has not moved with nothing to wait
  for: it gives a game without a deadline its deadline back, ends one that still does not move
  as abandoned, gives up (once, loudly) on one it cannot even read, and leaves alone a
  person's seat with time left on the clock.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from services.contracts.streams import NewMatch, game_key
from services.engine import service
from services.engine.service import Games
from services.engine.side import MemorySide, RedisSide
from services.engine.watchdog import RedisLogs, Watchdog
from services.eventlog import InMemoryEventStore, RedisEventStore, Seat, archive
from services.eventlog.entry import ABANDON, ANSWER, EVENT, SEED_REVEAL, decode_entry
from services.eventlog.records import Abandon, AnswerRecord, SeedReveal, decode_payload
from services.redisinfra.redis_client import connect
from services.rules import api
from services.verify import verify

SECRET = b"watchdog-test-secret-of-32-bytes!"


def _match(game: str, bots: bool = True, seed: int = 5) -> NewMatch:
    return NewMatch(
        match_id=game,
        ruleset="standard",
        seats=[Seat("bot:random" if bots else f"p{i}", bots) for i in range(4)],
        seed=seed,
    )


def _entries(path: Path) -> list[Any]:
    return [decode_entry(r) for r in archive.unpack(path.read_bytes()).records]


def _ended(entries: list[Any]) -> Any:
    return next(
        api.decode_event(e.payload)
        for e in reversed(entries)
        if e.kind == EVENT and b"game_ended" in e.payload
    )


@pytest.mark.parametrize(
    ("caps", "reason"),
    [({"max_decisions": 30}, "decision_limit"), ({"max_log_entries": 120}, "log_limit")],
)
async def test_no_bot_answers_yet_the_game_ends_at_the_cap(
    tmp_path: Path, caps: dict[str, int], reason: str
) -> None:
    """No bot worker at all: every bot decision is answered by default once past its deadline
    (here at once), until the platform's cap ends the game."""
    side = MemorySide()
    g = Games(
        InMemoryEventStore(),
        side,
        SECRET,
        default_time_limit_ms=0,
        bot_repost_ms=0,
        archive_dir=tmp_path,
        **caps,  # type: ignore[arg-type]
    )
    await g.create_game(_match("g1"))
    for _ in range(200):
        if (tmp_path / "g1.arena").exists():
            break
        await g.sweep()
    path = tmp_path / "g1.arena"
    assert path.exists(), "the game never ended"
    report = verify(path)
    assert report.ok, report.divergence
    entries = _entries(path)
    answers = [decode_payload(e.payload, AnswerRecord) for e in entries if e.kind == ANSWER]
    assert answers and all(a.auto for a in answers)  # the server's default, for bot seats
    [end] = [decode_payload(e.payload, Abandon) for e in entries if e.kind == ABANDON]
    assert end.reason == reason and "cap" in end.detail
    ended = _ended(entries)
    assert ended.draw and ended.reason == reason and ended.winner_seats == []
    assert entries[-1].kind == SEED_REVEAL
    assert decode_payload(entries[-1].payload, SeedReveal).winners == []
    if reason == "decision_limit":
        assert len(answers) == 30
    else:
        assert 120 <= len(entries) < 120 + 40  # ended in the batch that crossed the cap
    assert not side.deadlines  # nothing left due
    assert (
        g.metrics.registry.get_sample_value(
            "arena_engine_games_ended_by_platform_total", {"reason": reason}
        )
        == 1
    )


async def test_a_bot_decision_within_its_deadline_is_reposted_not_answered() -> None:
    side = MemorySide()
    g = Games(InMemoryEventStore(), side, SECRET, default_time_limit_ms=60_000, bot_repost_ms=0)
    await g.create_game(_match("g1"))
    version = (await g.get("g1")).log.version
    await g.sweep()
    assert (await g.get("g1")).log.version == version  # nobody answered for the bot
    assert len(side.decisions()) == 2  # published again


async def test_a_game_the_sweep_fails_on_holds_up_no_other(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One game whose log cannot be read: the sweep says so once, waits before trying it
    again, and answers the other games' due decisions meanwhile (a failure used to end the
    whole round, every round, for every game behind it)."""
    store, side = InMemoryEventStore(), MemorySide()
    g = Games(store, side, SECRET, default_time_limit_ms=0, bot_repost_ms=0)
    await g.create_game(_match("bad"))
    await g.create_game(_match("good", seed=6))
    await store.append("bad", await store.head("bad"), [b"\xc1 not an entry"])
    before = await store.head("good")
    for _ in range(3):
        await g.sweep()
    assert await store.head("good") > before  # answered by default, three times
    assert "bad" in g.failing
    assert sum("game bad failed" in r.message for r in caplog.records) == 1
    assert (
        g.metrics.registry.get_sample_value(
            "arena_engine_sweep_failures_total", {"result": "failed"}
        )
        == 1
    )


@pytest.fixture
async def env(redis_url: str, redis_namespace: str, tmp_path: Path) -> AsyncIterator[Any]:
    client = connect(redis_url)
    store = RedisEventStore(client, redis_namespace)
    side = RedisSide(client, redis_namespace)
    games = Games(store, side, SECRET, archive_dir=tmp_path)
    said: list[str] = []
    dog = Watchdog(
        games, RedisLogs(client, redis_namespace), stall_ms=1000, abandon_ms=5000, say=said.append
    )
    try:
        yield games, dog, said, client, redis_namespace, tmp_path
    finally:
        keys = [k async for k in client.scan_iter(match=f"{redis_namespace}*", count=1000)]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def test_the_watchdog_recovers_ends_or_gives_up(env: Any) -> None:
    games, dog, said, client, ns, folder = env
    side: RedisSide = games.side
    for g in ("orphan", "dead", "broken"):
        await games.create_game(_match(g))
    await games.create_game(_match("person", bots=False))  # 60 s on the clock: waiting
    for g in ("orphan", "dead", "broken"):
        for game, decision in await side.deadlines_of(g):
            await side.clear_deadline(game, decision)  # lost deadlines: nothing moves them
    # a log whose last entry cannot be read: the game cannot even be loaded
    now = int(time.time() * 1000)
    fields = {"e": b"\xc1garbage", "t": str(now).encode()}
    await client.xadd(game_key(ns, "broken", "log"), fields, id="*")

    found = await dog.once(now + 2000)  # stalled, not yet for abandon_ms
    assert found == ["broken", "dead", "orphan"]  # "person" waits with time left
    sample = games.metrics.registry.get_sample_value
    assert sample("arena_engine_games_stalled") == 3
    assert await side.deadlines_of("orphan") and await side.deadlines_of("dead")  # recovered
    assert any("game orphan has not moved" in line for line in said)
    assert any("game broken" in line and "cannot be recovered" in line for line in said)

    # their recovered deadlines passed too, and still nothing moved them (no bot worker)
    found = await dog.once(now + 6000)
    assert found == ["broken", "dead", "orphan"]
    for g in ("dead", "orphan"):
        assert any(f"game {g} did not move" in line and "abandoned" in line for line in said)
        path = folder / f"{g}.arena"
        assert path.exists() and verify(path).ok
        ended = _ended(_entries(path))
        assert ended.draw and ended.reason == "stalled"
    assert await dog.once(now + 6000) == ["broken"]  # the others are archived and gone
    assert sum("game broken" in line for line in said) == 1  # given up on once, not every round
    assert await dog.once(now) == []  # nothing has been quiet that long yet
    assert sample("arena_engine_games_stalled") == 0


async def test_service_answers_for_a_bot_only_past_its_deadline(
    env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Redis, a bot seat's decision age is read from its entry's append time (Redis TIME)."""
    games, _, _, _, _, _ = env
    games.default_time_limit_ms = 1000
    games.bot_repost_ms = 0
    await games.create_game(_match("slow"))
    version = (await games.get("slow")).log.version
    now = service._now_ms()
    monkeypatch.setattr(service, "_now_ms", lambda: now + 500)
    await games.sweep()
    assert (await games.get("slow")).log.version == version  # reposted, within its deadline
    monkeypatch.setattr(service, "_now_ms", lambda: now + 1500)
    await games.sweep()
    hot = await games.get("slow")
    assert hot.log.version > version
    [(rec, _)] = hot.answers.values()
    assert rec.auto
