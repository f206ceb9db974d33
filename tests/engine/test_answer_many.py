"""`Games.answer_many`: a batch of bot answers decided together (one append for all, no task
per answer) logs exactly what one `submit_action` at a time logs, and every answer the fast way
cannot take (a stale copy, a duplicate, a refusal, an append that fails) gets what
`submit_action` gives it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.contracts.streams import NewMatch
from services.engine.service import Games, Refused, Result
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.eventlog.entry import ANSWER, EVENT, decode_entry
from services.eventlog.gamelog import GameLog
from services.rules import api
from services.verify import verify

SECRET = b"answer-many"
GAMES = [f"g{i}" for i in range(6)]


def _games(store: InMemoryEventStore | None = None) -> Games:
    return Games(store or InMemoryEventStore(), MemorySide(), SECRET, snapshot_every=50)


async def _start(games: Games) -> None:
    for k, g in enumerate(GAMES):
        seats = [Seat("bot:random", True) for _ in range(5)]
        await games.create_game(NewMatch(match_id=g, ruleset="standard", seats=seats, seed=40 + k))


async def _asked(games: Games, g: str) -> tuple[str, str, int, list[str]] | None:
    """A seeded random answer to `g`'s pending decision (None once the game is over)."""
    hot = await games.get(g)
    d = api.pending(hot.game)
    if d is None or hot.game.over:
        return None
    picks = list(RandomPolicy(d.id * 7919 + len(g)).act(d).picks)
    return g, tokens.issue(SECRET, g, d.seat, bot=True), hot.ids.opaque(d.id), picks


async def _batch(games: Games, asked: list[tuple[str, str, int, list[str]]]) -> list[object]:
    out: list[object] = [None] * len(asked)

    def done(i: int, r: Result | BaseException) -> None:
        assert out[i] is None  # one outcome per answer
        out[i] = r

    await games.answer_many(asked, done)
    assert all(r is not None for r in out)
    return out


def _conflicts(games: Games) -> float:
    value = games.metrics.registry.get_sample_value("arena_engine_append_conflicts_total")
    return value or 0.0


def _played(games: Games, g: str) -> list[tuple[str, bytes]]:
    """The answers and events of a log (header and seed reveal differ by salt and time)."""
    log = [decode_entry(data) for data in games.store._logs[g]]  # type: ignore[attr-defined]
    return [(e.kind, e.payload) for e in log if e.kind in (ANSWER, EVENT)]


async def test_a_batch_logs_what_one_at_a_time_logs() -> None:
    """Six games to the end, each step's answers in one batch, against the same answers one
    at a time: the same answers and events, every game archived-ready and verified; the fast
    way took every answer (no conflict, nothing to the one-at-a-time path)."""
    batched, alone = _games(), _games()
    await _start(batched)
    await _start(alone)
    while asked := [a for g in GAMES if (a := await _asked(batched, g)) is not None]:
        results = await _batch(batched, asked)
        assert all(isinstance(r, Result) and not r.duplicate for r in results), results
        for a in asked:
            await alone.submit_action(*a)
    for g in GAMES:
        assert _played(batched, g) == _played(alone, g)
        assert verify([d for _, d in await batched.store.read(g)]).ok
        hot = await batched.get(g)
        assert hot.finished and hot.game.over
    assert _conflicts(batched) == 0


async def test_refusals_duplicates_and_a_busy_game_get_what_submit_action_gives() -> None:
    games = _games()
    await _start(games)
    good = await _asked(games, "g0")
    assert good is not None
    g1 = await _asked(games, "g1")
    assert g1 is not None
    forged = ("g1", tokens.issue(b"forged", "g1", 0, bot=True), g1[2], g1[3])
    other_game = ("g2", g1[1], g1[2], g1[3])  # a g1 token for g2
    g3 = await _asked(games, "g3")
    assert g3 is not None
    unknown = (g3[0], g3[1], g3[2] + 1, g3[3])
    illegal = (*(await _asked(games, "g4") or ())[:3], ["card:99999"])
    results = await _batch(games, [good, good, forged, other_game, unknown, illegal])
    first, again = results[0], results[1]
    assert isinstance(first, Result) and not first.duplicate
    assert isinstance(again, Result) and again.duplicate  # the same game again: after the first
    assert again.version == first.version
    codes = [r.code if isinstance(r, Refused) else r for r in results[2:]]
    assert codes == [
        "UNAUTHENTICATED",
        "PERMISSION_DENIED",
        "FAILED_PRECONDITION",
        "INVALID_ARGUMENT",
    ]
    # the refused games did not move
    for g in ("g1", "g2", "g3", "g4"):
        assert await games.store.head(g) == (await games.get(g)).log.version


async def test_a_stale_copy_conflicts_and_is_decided_again_on_the_log() -> None:
    """Another worker answered the decision first: the stale copy's append conflicts, the game
    is reloaded, and the answer comes back as that worker's (a duplicate), nothing logged
    twice; an answer to another game in the same batch is taken as usual."""
    store = InMemoryEventStore()
    mine, theirs = _games(store), _games(store)
    await _start(mine)
    asked = await _asked(mine, "g0")
    other = await _asked(mine, "g1")
    assert asked is not None and other is not None
    await theirs.submit_action(*asked)
    head = await store.head("g0")
    r, o = await _batch(mine, [asked, other])
    assert isinstance(r, Result) and r.duplicate and r.version == head
    assert isinstance(o, Result) and not o.duplicate
    assert _conflicts(mine) == 1
    assert await store.head("g0") == head
    await GameLog.load(store, "g0")  # (its chain checked: ChainBroken otherwise)


async def test_a_failed_append_drops_the_advanced_copy() -> None:
    """An append that fails (the store away) fails those answers only, and the copies that
    ran ahead of the log leave the cache: the next answer is decided on the log as it is."""
    store = InMemoryEventStore()
    games = _games(store)
    await _start(games)
    asked = [a for g in ("g0", "g1") if (a := await _asked(games, g)) is not None]
    heads = {g: await store.head(g) for g in ("g0", "g1")}
    real = store.append

    async def away(game: str, expected: int, records: Sequence[bytes]) -> int:
        if game == "g0":
            raise ConnectionError("store away")
        return await real(game, expected, records)

    store.append = away  # type: ignore[method-assign,assignment]
    failed, ok = await _batch(games, asked)
    store.append = real  # type: ignore[method-assign]
    assert isinstance(failed, ConnectionError) and isinstance(ok, Result)
    assert "g0" not in games.cache and await store.head("g0") == heads["g0"]
    again = await _batch(games, [asked[0]])  # decided again on the log: the same decision
    assert isinstance(again[0], Result) and not again[0].duplicate
    await GameLog.load(store, "g0")  # (its chain checked: ChainBroken otherwise)


async def test_a_person_seat_is_refused_to_a_bots_token() -> None:
    games = _games()
    seats = [Seat("alice", False)] + [Seat("bot:random", True) for _ in range(4)]
    await games.create_game(NewMatch(match_id="p1", ruleset="standard", seats=seats, seed=3))
    hot = await games.get("p1")
    while (d := api.pending(hot.game)) is not None and d.seat != 0:
        token = tokens.issue(SECRET, "p1", d.seat, bot=True)
        picks = list(api.default_answer(d).picks)
        await games.submit_action("p1", token, hot.ids.opaque(d.id), picks)
        hot = await games.get("p1")
    assert d is not None
    bot_token = tokens.issue(SECRET, "p1", 0, bot=True)
    (r,) = await _batch(
        games, [("p1", bot_token, hot.ids.opaque(d.id), list(api.default_answer(d).picks))]
    )
    assert isinstance(r, Refused) and r.code == "PERMISSION_DENIED"
    assert not hot.lock.locked()  # (the refusal left the game free for its person)


@pytest.mark.parametrize("picks", [["x"] * 65, ["x" * 65]])
async def test_too_many_or_too_long_picks(picks: list[str]) -> None:
    games = _games()
    await _start(games)
    asked = await _asked(games, "g0")
    assert asked is not None
    (r,) = await _batch(games, [(*asked[:3], picks)])
    assert isinstance(r, Refused) and r.code == "INVALID_ARGUMENT"
    assert await games.store.head("g0") == (await games.get("g0")).log.version
