"""The worker core without the network: in-memory store and side."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.contracts.streams import GameFinished
from services.engine import service
from services.engine.service import Games, NewMatch, Refused
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.eventlog.entry import decode_entry
from services.eventlog.gamelog import GameLog
from services.eventlog.store import Snapshot
from services.rules import api
from services.verify import verify

SECRET = b"k"


def _games(
    store: InMemoryEventStore | None = None, side: MemorySide | None = None, **kw: object
) -> Games:
    return Games(store or InMemoryEventStore(), side or MemorySide(), SECRET, **kw)  # type: ignore[arg-type]


def match(mid: str = "m1", players: int = 4, bots: bool = True, seed: int = 7) -> NewMatch:
    return NewMatch(
        match_id=mid,
        ruleset="standard",
        seats=[Seat(f"p{i}", bots) for i in range(players)],
        seed=seed,
    )


async def test_create_is_idempotent() -> None:
    g = _games()
    created, v = await g.create_game(match())
    again, v2 = await g.create_game(match())
    assert created and not again and v == v2
    assert len(await g.store.read("m1")) == v


async def test_create_after_a_crash_deals_the_stored_seed() -> None:
    """A create retried after a crash between storing the secret and the header (its match
    without a seed draws another one) deals the game of the seed stored first, not the one it
    set up to validate the match."""
    side = MemorySide()
    await side.put_secret("m1", service.Secret(11, b"s" * 16, 60_000))
    g = _games(side=side)
    await g.create_game(match(seed=12))
    ours = api.new_game("standard", 4, 11, {})
    events = api.advance(ours)
    stored = [data for _, data in await g.store.read("m1")]
    assert [decode_entry(d).payload for d in stored[1:]] == [api.encode_event(e) for e in events]
    assert api.snapshot(g.cache["m1"].game) == api.snapshot(ours)


async def test_bad_matches_refused() -> None:
    g = _games()
    for bad in (
        NewMatch(match_id="x y", ruleset="standard", seats=[Seat("a")] * 4),
        NewMatch(match_id="m", ruleset="nope", seats=[Seat("a")] * 4),
        NewMatch(match_id="m", ruleset="standard", seats=[]),
        NewMatch(match_id="m", ruleset="standard", seats=[Seat("a")] * 4, options={"bogus": 1}),
    ):
        with pytest.raises(Refused) as err:
            await g.create_game(bad)
        assert err.value.code == "INVALID_ARGUMENT"
    assert await g.store.head("m") == 0


async def play_out(g: Games, game_id: str, fresh_cache_every: int = 0) -> int:
    pol = RandomPolicy(1)
    n = 0
    while True:
        hot = await g.get(game_id)
        d = api.pending(hot.game)
        if d is None or hot.game.over:
            return n
        a = pol.act(d)
        tok = tokens.issue(SECRET, game_id, d.seat)
        try:
            await g.submit_action(game_id, tok, hot.ids.opaque(d.id), list(a.picks))
        except Refused as exc:
            assert exc.code == "INVALID_ARGUMENT"
            picks = list(api.default_answer(d).picks)
            await g.submit_action(game_id, tok, hot.ids.opaque(d.id), picks)
        n += 1
        if fresh_cache_every and n % fresh_cache_every == 0:
            g.evict(game_id)


async def test_game_to_the_end_verifies_with_reloads() -> None:
    g = _games(snapshot_every=50)
    await g.create_game(match())
    await play_out(g, "m1", fresh_cache_every=7)
    records = [d for _, d in await g.store.read("m1")]
    report = verify(records)
    assert report.ok, report.divergence
    finished = [m for m in g.side.published if isinstance(m, GameFinished)]  # type: ignore[attr-defined]
    assert [m.game for m in finished] == ["m1"]


async def test_a_snapshot_of_an_older_state_format_is_ignored() -> None:
    """A snapshot stored by an engine with another state format is never misread: the game is
    rebuilt from its whole log and plays on from exactly the same state."""
    store, side = InMemoryEventStore(), MemorySide()
    g = _games(store, side, snapshot_every=10)
    await g.create_game(match())
    pol = RandomPolicy(5)
    for _ in range(25):
        hot = await g.get("m1")
        d = api.pending(hot.game)
        assert d is not None
        tok = tokens.issue(SECRET, "m1", d.seat)
        await g.submit_action("m1", tok, hot.ids.opaque(d.id), pol.act(d).picks)
    state = api.snapshot((await g.get("m1")).game)
    head = await store.head("m1")
    stored = await store.load_snapshot("m1")
    assert stored is not None and api.snapshot_current(stored.state)
    # what an older engine stored: unversioned msgpack, here even at the head
    old = Snapshot(head, (await GameLog.load(store, "m1")).log.head_hash, stored.state[2:])
    assert await store.save_snapshot("m1", old)
    with pytest.raises(api.StaleSnapshot):
        api.restore(old.state)
    fresh = _games(store, side)
    assert api.snapshot((await fresh.get("m1")).game) == state
    await play_out(fresh, "m1")
    assert verify([d for _, d in await store.read("m1")]).ok


async def test_seat_rules_and_duplicates() -> None:
    store = InMemoryEventStore()
    g = _games(store)
    await g.create_game(match())
    await g.create_game(match("other"))
    hot = await g.get("m1")
    d = api.pending(hot.game)
    assert d is not None
    did = hot.ids.opaque(d.id)  # what clients see of the decision's id
    own = tokens.issue(SECRET, "m1", d.seat)
    wrong_seat = tokens.issue(SECRET, "m1", (d.seat + 1) % 4)
    other_game = tokens.issue(SECRET, "other", d.seat)
    expired = tokens.issue(SECRET, "m1", d.seat, ttl_ms=-1)
    forged = tokens.issue(b"not the secret", "m1", d.seat)
    head = await store.head("m1")
    cases = [
        (wrong_seat, did, "PERMISSION_DENIED"),
        (other_game, did, "PERMISSION_DENIED"),
        (expired, did, "UNAUTHENTICATED"),
        (forged, did, "UNAUTHENTICATED"),
        ("", did, "UNAUTHENTICATED"),
        (own, did + 5, "FAILED_PRECONDITION"),
        (own, d.id, "FAILED_PRECONDITION"),  # the engine's own number is no id
    ]
    for tok, decision, code in cases:
        with pytest.raises(Refused) as err:
            await g.submit_action("m1", tok, decision, list(api.default_answer(d).picks))
        assert err.value.code == code, (tok, decision)
    with pytest.raises(Refused) as err:
        await g.submit_action("m1", own, did, ["no such option"])
    assert err.value.code == "INVALID_ARGUMENT"
    assert await store.head("m1") == head
    first = await g.submit_action("m1", own, did, list(api.default_answer(d).picks))
    assert not first.duplicate and first.version > head
    g.evict("m1")  # a duplicate is recognised from the log too
    dup = await g.submit_action("m1", own, did, ["anything"])
    assert dup.duplicate and dup.version == first.version and dup.answer == first.answer
    assert await store.head("m1") == first.version
    with pytest.raises(Refused) as err:
        await g.submit_action("m1", wrong_seat, did, [])
    assert err.value.code == "PERMISSION_DENIED"
    with pytest.raises(Refused) as err:
        await g.submit_action("nosuch", tokens.issue(SECRET, "nosuch", 0), 1, [])
    assert err.value.code == "NOT_FOUND"


async def test_two_workers_conflict_and_reload() -> None:
    store, side = InMemoryEventStore(), MemorySide()
    a, b = _games(store, side), _games(store, side)
    await a.create_game(match())
    await b.get("m1")  # b caches the game at this version
    rng = random.Random(3)
    for _ in range(30):
        w = rng.choice([a, b])
        hot = await w.get("m1")
        d = api.pending(hot.game)
        assert d is not None
        tok = tokens.issue(SECRET, "m1", d.seat)
        try:
            await w.submit_action(
                "m1", tok, hot.ids.opaque(d.id), list(api.default_answer(d).picks)
            )
        except Refused as exc:  # a stale cache may see an old decision as pending
            assert exc.code in ("FAILED_PRECONDITION",)
            w.evict("m1")
    assert a.metrics.conflicts._value.get() + b.metrics.conflicts._value.get() >= 0
    assert verify([d for _, d in await store.read("m1")]).entries > 0


async def test_silent_human_gets_the_default_answer() -> None:
    side = MemorySide()
    g = _games(side=side, default_time_limit_ms=0)
    await g.create_game(match(bots=False))
    hot = await g.get("m1")
    d = api.pending(hot.game)
    assert d is not None
    assert await g.sweep() == 1
    hot = await g.get("m1")
    rec, _ = hot.answers[d.id]
    assert rec.auto and rec.picks == list(api.default_answer(d).picks)


async def test_bot_decisions_are_published_and_republished() -> None:
    side = MemorySide()
    g = _games(side=side, bot_repost_ms=0)
    await g.create_game(match())
    published = side.decisions()
    assert len(published) == 1
    # the seat's player id: the bot service reads a policy from it
    assert published[0].player == f"p{published[0].seat}"
    await g.sweep()
    assert len(side.decisions()) == 2


async def test_a_finish_cut_short_is_completed_by_the_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last answer leaves a finishing deadline: if archiving fails (Redis away, or the
    worker dies right there), a later sweep finishes and archives the game; once archived,
    no deadline is left."""
    archive_dir = tmp_path / "archive"
    side = MemorySide()
    g = _games(side=side, archive_dir=archive_dir)
    await g.create_game(match())
    real = service.archive_game
    calls = 0

    async def flaky(*args: object, **kw: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RedisConnectionError("Error 111 connecting")
        return await real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(service, "archive_game", flaky)
    with pytest.raises(RedisConnectionError):
        await play_out(g, "m1")
    assert not (archive_dir / "m1.arena").exists()
    assert await side.pending_count() == 1  # the finishing deadline
    now = service._now_ms()
    monkeypatch.setattr(service, "_now_ms", lambda: now + service.FINISH_AFTER_MS + 1)
    await g.sweep()
    assert (archive_dir / "m1.arena").exists()
    assert verify(archive_dir / "m1.arena").ok
    assert await side.pending_count() == 0


async def test_games_active_returns_to_zero_once_games_are_archived(tmp_path: Path) -> None:
    """The gauge counts the games in play in this worker's cache, read when scraped: once
    every game is archived (and dropped from the cache) it is back at zero."""
    g = _games(archive_dir=tmp_path)
    for k in range(3):
        await g.create_game(match(f"m{k}", seed=10 + k))
    assert g.metrics.registry.get_sample_value("arena_engine_games_active") == 3
    for k in range(3):
        with pytest.raises(Refused, match="no game"):  # archived, its log dropped
            await play_out(g, f"m{k}")
    assert len(list(tmp_path.glob("*.arena"))) == 3
    assert g.metrics.registry.get_sample_value("arena_engine_games_active") == 0


async def test_a_bot_seat_s_token_is_reused_until_half_its_lifetime_is_gone() -> None:
    """A bot seat's messages carry one token until half its lifetime is gone (the verifier's
    cache keeps hitting), then a new one that lives a whole lifetime from then."""
    g = _games(bot_token_ttl_ms=1_000)
    await g.create_game(match())
    hot = await g.get("m1")
    t0 = 1_700_000_000_000
    first = g._bot_token(hot, 1, t0)
    assert g._bot_token(hot, 1, t0 + 499) == first  # 501 ms of its 1,000 left
    renewed = g._bot_token(hot, 1, t0 + 500)  # half gone: a new one
    assert renewed != first
    assert tokens.verify(SECRET, renewed, now_ms=t0 + 1_499).exp == t0 + 1_500
    assert g._bot_token(hot, 1, t0 + 999) == renewed
    assert g._bot_token(hot, 0, t0 + 999) not in (first, renewed)  # each seat its own
