"""Ratings: camps, direction of moves, exactly-once from arena:finished, rebuild == live."""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.contracts.streams import FINISHED, GameFinished, stream_key
from services.eventlog import Seat
from services.eventlog.catalog import archive_game
from services.eventlog.redis_store import RedisEventStore
from services.eventlog.signing import PUBKEY_ENV, Signer
from services.matchmaking import rating_store, ratings
from services.matchmaking.consumer import GROUP, Ratings, rebuild
from services.matchmaking.rating_store import RatingStore
from services.matchmaking.ratings import PRIOR, GameResult, apply, camps, fold
from services.matchmaking.results import NotSigned, load_result
from services.redisinfra.streams import GroupConsumer, ensure_group, publish_message
from services.rules import api
from services.verify import record_game


def result(
    game: str,
    roles: list[str],
    winners: list[int],
    *,
    ended: int = 1,
    bots: list[bool] | None = None,
    players: list[str] | None = None,
) -> GameResult:
    n = len(roles)
    return GameResult(
        game_id=game,
        mode=f"standard-{n}",
        ruleset="standard",
        ended_ms=ended,
        players=players or [f"p{i}" for i in range(n)],
        bots=bots or [False] * n,
        roles=roles,
        winners=winners,
    )


ROLES5 = ["lord", "rebel", "loyalist", "rebel", "renegade"]


def test_camps_lord_with_loyalists_rebels_together_renegades_alone() -> None:
    r = result("g", ["lord", "rebel", "loyalist", "renegade", "rebel", "renegade"], [1, 4])
    assert camps(r) == [[0, 2], [1, 4], [3], [5]]


def test_winners_rise_losers_fall() -> None:
    lord_wins = apply({}, result("g1", ROLES5, [0, 2]))
    assert lord_wins["p0"].mu > PRIOR.mu and lord_wins["p2"].mu > PRIOR.mu
    assert all(lord_wins[p].mu < PRIOR.mu for p in ("p1", "p3", "p4"))
    assert all(r.sigma < PRIOR.sigma and r.games == 1 for r in lord_wins.values())
    renegade_wins = apply(lord_wins, result("g2", ROLES5, [4]))
    assert renegade_wins["p4"].mu > lord_wins["p4"].mu
    assert all(renegade_wins[p].mu < lord_wins[p].mu for p in ("p0", "p1", "p2", "p3"))
    assert renegade_wins["p0"].games == 2


def test_bots_are_not_rated() -> None:
    out = apply({}, result("g", ROLES5, [1, 3], bots=[False, True, False, True, True]))
    assert set(out) == {"p0", "p2"} and out["p0"].mu < PRIOR.mu


def test_draw_counts_but_moves_nobody() -> None:
    r = GameResult(
        game_id="d",
        mode="standard-5",
        ruleset="standard",
        ended_ms=1,
        players=[f"p{i}" for i in range(5)],
        bots=[False] * 5,
        roles=ROLES5,
        winners=[],
        draw=True,
    )
    out = apply({}, r)
    assert all((v.mu, v.sigma, v.games) == (PRIOR.mu, PRIOR.sigma, 1) for v in out.values())


def test_fold_is_order_of_end_time_not_of_arrival() -> None:
    rng = random.Random(3)
    games = [
        result(
            f"g{i}",
            ROLES5,
            rng.choice([[0, 2], [1, 3], [4]]),
            ended=rng.randint(0, 9),
            players=rng.sample([f"p{j}" for j in range(8)], 5),
        )
        for i in range(30)
    ]
    shuffled = games[:]
    rng.shuffle(shuffled)
    assert fold(games) == fold(shuffled) == fold(games + shuffled)


async def test_late_arrival_refolds(redis_client: aioredis.Redis, redis_namespace: str) -> None:
    rng = random.Random(5)
    games = [
        result(
            f"g{i}",
            ROLES5,
            rng.choice([[0, 2], [1, 3], [4]]),
            ended=100 + i,
            players=rng.sample([f"p{j}" for j in range(8)], 5),
        )
        for i in range(12)
    ]
    store = RatingStore(redis_client, redis_namespace)
    order = games[:]
    rng.shuffle(order)
    for g in order:
        assert await store.record(g) is True
    assert await store.record(games[0]) is False
    assert await store.table("standard-5") == fold(games)["standard-5"]
    board = await store.leaderboard("standard-5", 0, 3)
    assert [r.ordinal for _, r in board] == sorted(
        (r.ordinal for r in fold(games)["standard-5"].values()), reverse=True
    )[:3]


async def test_late_arrival_folds_again_only_when_a_later_game_shares_a_person(
    redis_client: aioredis.Redis, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model runs once per game with a person, however many games the history holds: a
    game of bots only runs no model, and a late game whose people no later game had is
    applied on top (the same floats as the fold). One whose person played later folds again.
    (Each late arrival used to run the model over the whole history, bot games included: the
    idle matchmaker's 0.5 core after a burst of people's games, issue 44.)"""
    calls: list[int] = []

    class Counted:  # the model, its runs counted
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def rate(self, *a: Any, **k: Any) -> Any:
            calls.append(1)
            return real.rate(*a, **k)

    real = ratings.MODEL
    monkeypatch.setattr(ratings, "MODEL", Counted())
    bots = [
        result(f"b{i:02}", ROLES5, [0, 2], ended=100 + i, bots=[True] * 5, players=["bot:x"] * 5)
        for i in range(20)
    ]
    people = [  # p0..p4 at 150, q0..q4 at 160 and r0..r4 at 105 (late, nobody of theirs later)
        result(f"g{k}", ROLES5, [1, 3], ended=end, players=[f"{k}{i}" for i in range(5)])
        for k, end in (("p", 150), ("q", 160), ("r", 105))
    ]
    store = RatingStore(redis_client, redis_namespace)
    for g in [*bots, *people]:
        assert await store.record(g) is True
    assert len(calls) == 3  # one per game with people; the late one was not folded again
    assert await store.table("standard-5") == fold([*bots, *people])["standard-5"]

    again = result("gp2", ROLES5, [4], ended=140, players=["p0", "q1", "x2", "x3", "x4"])
    calls.clear()
    assert await store.record(again) is True  # p0 and q1 played later: folded in order
    assert len(calls) == 4  # g-r, this one, g-p, g-q: the bot games run no model
    assert await store.table("standard-5") == fold([*bots, *people, again])["standard-5"]


async def test_history_stays_bounded_and_ratings_stay_the_fold(
    redis_client: aioredis.Redis, redis_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history keeps the newest `keep` games of a mode; the older are folded into a base.
    Late arrivals within the history still refold exactly; a game older than the cut counts as
    rated; `replace` (the rebuild) stores the same split."""
    monkeypatch.setattr(rating_store, "COMPACT_EVERY", 2)
    rng = random.Random(9)
    pool = [f"p{j}" for j in range(9)]
    games = [
        result(
            f"g{i:02}",
            ROLES5,
            rng.choice([[0, 2], [1, 3], [4]]),
            ended=100 + i,
            players=rng.sample(pool, 5),
        )
        for i in range(40)
    ]
    arrival = []
    for start in range(0, 40, 4):  # announced out of order within groups of four
        chunk = games[start : start + 4]
        rng.shuffle(chunk)
        arrival += chunk
    store = RatingStore(redis_client, redis_namespace, keep=6)
    res = f"{redis_namespace}:{{rt}}:res:standard-5"
    for g in arrival:
        assert await store.record(g) is True
        assert await redis_client.hlen(res) < 6 + 2
    expected = fold(games)["standard-5"]
    assert await store.table("standard-5") == expected
    assert await store.record(games[-1]) is False  # in the history
    assert await store.record(games[0]) is False  # before the cut: folded long ago
    assert await store.table("standard-5") == expected

    more = [
        result(f"h{i:02}", ROLES5, [0, 2], ended=200 + i, players=rng.sample(pool, 5))
        for i in range(3)
    ]
    assert await store.replace(games) == {"standard-5": expected}
    assert await redis_client.hlen(res) == 6
    for g in (more[1], more[0], more[2]):  # one late arrival: refolds from the base
        assert await store.record(g) is True
    assert await store.table("standard-5") == fold([*games, *more])["standard-5"]


async def play(
    store: RedisEventStore, game: str, seed: int, players: list[str], bots: list[bool]
) -> None:
    seats = [Seat(p, b) for p, b in zip(players, bots, strict=True)]
    await record_game(store, game, api, "standard", len(seats), seed, seats=seats)


async def test_finished_stream_to_ratings_and_rebuild(
    redis_client: aioredis.Redis,
    redis_namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARENA_PARTITIONS", "1")  # one finished stream: one consumer reads all
    ns = redis_namespace
    store = RedisEventStore(redis_client, ns)
    ratings = RatingStore(redis_client, ns)
    finished = stream_key(ns, FINISHED.name, 0)
    rng = random.Random(7)
    pool = [f"u{i}" for i in range(7)]
    games = []
    for i in range(8):
        n = rng.choice([5, 6])
        players = rng.sample(pool, n)
        bots = [False] * (n - 1) + [i % 2 == 0]
        await play(store, f"game-{i}", 100 + i, players, bots)
        games.append(f"game-{i}")
    # half the games are archived (and dropped from Redis) before the ratings see them
    for g in games[::2]:
        await archive_game(store, g, tmp_path)
    for g in [*games, games[1], games[2]]:  # two announcements repeated
        await publish_message(redis_client, ns, FINISHED, GameFinished(game=g))
    await publish_message(redis_client, ns, FINISHED, GameFinished(game="bad id!"))
    await ensure_group(redis_client, finished, GROUP)
    worker = Ratings(store, ratings, tmp_path)
    consumer = GroupConsumer(redis_client, finished, GROUP, "c1", dead_stream=f"{ns}:dead")

    async def handler(msg: object) -> None:
        await worker.on_finished(consumer, msg)  # type: ignore[arg-type]

    while await consumer.poll(handler, count=5, block_ms=50):
        pass
    assert await redis_client.xlen(f"{ns}:dead") == 1
    live = {m: await ratings.table(m) for m in ("standard-5", "standard-6")}
    counted = {m: len(await redis_client.hkeys(f"{ns}:{{rt}}:res:{m}")) for m in live}
    assert sum(counted.values()) == len(games)  # each game once, duplicates ignored
    for g in games:  # direction: each player moved with their camp's result
        r = await load_result(store, g, tmp_path)
        assert r.players and len(r.roles) == len(r.players)
    for g in games[1::2]:
        await archive_game(store, g, tmp_path)
    rebuilt, skipped = await rebuild(tmp_path)
    assert skipped == {}
    assert {
        m: {p: (r.mu, r.sigma, r.games) for p, r in sorted(t.items())} for m, t in live.items() if t
    } == rebuilt
    stored, _ = await rebuild(tmp_path, ratings)  # write the rebuild back: same numbers
    assert stored == rebuilt
    assert {m: await ratings.table(m) for m in live} == live


async def test_archives_the_platform_did_not_sign_move_no_rating(
    redis_client: aioredis.Redis,
    redis_namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A game read from an archive file counts only if the platform's key signed it: a file
    dropped in the folder unsigned, or forged whole with a key of its own, is refused (its
    message dead-lettered, not retried) and logged once, and moves no one's rating; the
    rebuild from the folder skips it too."""
    monkeypatch.setenv("ARENA_PARTITIONS", "1")
    platform, forger = Signer.generate(), Signer.generate()
    monkeypatch.setenv(PUBKEY_ENV, platform.public.hex)  # what the matchmaker is given
    ns = redis_namespace
    store = RedisEventStore(redis_client, ns)
    ratings = RatingStore(redis_client, ns)
    signers = {"signed": platform, "unsigned": None, "forged": forger}
    for i, (game, signer) in enumerate(signers.items()):
        await play(store, game, 300 + i, [f"{game}{k}" for k in range(5)], [False] * 5)
        await archive_game(store, game, tmp_path, signer=signer)  # the log leaves Redis
        await publish_message(redis_client, ns, FINISHED, GameFinished(game=game))
    finished = stream_key(ns, FINISHED.name, 0)
    await ensure_group(redis_client, finished, GROUP)
    worker = Ratings(store, ratings, tmp_path)
    consumer = GroupConsumer(redis_client, finished, GROUP, "c1", dead_stream=f"{ns}:dead")

    async def handler(msg: object) -> None:
        await worker.on_finished(consumer, msg)  # type: ignore[arg-type]

    with caplog.at_level(logging.WARNING, "services.matchmaking.results"):
        while await consumer.poll(handler, count=5, block_ms=50):
            pass
        for _ in range(3):  # asked again (a redelivery, a republished message): said once
            with pytest.raises(NotSigned):
                await load_result(store, "forged", tmp_path)
    rated = set(await redis_client.hkeys(f"{ns}:{{rt}}:res:standard-5"))
    assert rated == {b"signed"}, rated
    table = await ratings.table("standard-5")
    assert set(table) == {f"signed{k}" for k in range(5)}, table
    dead = [f for _, f in await redis_client.xrange(f"{ns}:dead")]
    assert len(dead) == 2 and await redis_client.xlen(finished) == 3
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2, said
    assert any("game unsigned not rated" in m and "unsigned" in m.split("(")[1] for m in said)
    assert any("game forged not rated" in m and "another key" in m for m in said)
    rebuilt, skipped = await rebuild(tmp_path)
    assert set(skipped) == {"unsigned.arena", "forged.arena"}, skipped
    assert set(rebuilt["standard-5"]) == {f"signed{k}" for k in range(5)}
