"""The replay core without a network: redaction, access, delay, resume, listing, verify."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from services.bots.demo import play_live
from services.eventlog import InMemoryEventStore, archive_game
from services.readside.access import BadRequest, Forbidden, NotFound
from services.readside.feed import GameFeed
from services.replay import ManualClock, Replay, TablePolicy
from services.replay.games import GameFilter
from services.rules import api
from services.rules.api import GOD, SPECTATOR, fold

from .leaks import Truth, n_cards, seq_of
from .live import LiveGame, settle


def token_check(game: str, seat: int, token: str) -> bool:
    return token == f"seat-{seat}"


def replay_of(store: InMemoryEventStore, **kw: object) -> Replay:
    return Replay(store, seat_check=token_check, **kw)  # type: ignore[arg-type]


async def records(store: InMemoryEventStore, game: str) -> list[bytes]:
    return [d for _, d in await store.read(game)]


async def test_finished_game_every_viewer_and_no_leaks() -> None:
    store = InMemoryEventStore()
    await play_live(store, "g", players=6, seed=11)
    r = replay_of(store)
    truth = Truth(await records(store, "g"), n_cards(await records(store, "g")))
    for viewer in (SPECTATOR, 0, 3, GOD):
        page = await r.get_events("g", viewer, f"seat-{viewer}")
        assert page.over and page.upto == truth.positions.position(viewer, await store.head("g"))
        assert [seq_of(e) for e in page.entries] == list(range(1, page.upto + 1))  # no gaps
        if viewer != GOD:
            found = [x for e in page.entries for x in truth.leaks(seq_of(e), e, viewer)]
            # A finished game hides nothing, but the redaction is per event, not per end:
            assert not found, found[:5]
    god = await r.get_events("g", GOD)
    spectator = await r.get_events("g", SPECTATOR)
    assert len(god.entries) > len(spectator.entries)  # answers are GOD-only
    await r.close()


async def test_live_spectator_never_gets_a_hidden_card_and_god_waits_for_the_end() -> None:
    store = InMemoryEventStore()
    game = LiveGame(store, "live", players=5, seed=4)
    r = replay_of(store)
    await settle()
    received: list[bytes] = []
    seat_view: list[bytes] = []
    spec = await r.stream("live", SPECTATOR)
    seat = await r.stream("live", 2, "seat-2")

    async def drain(it: object, out: list[bytes]) -> None:
        async for batch in it:  # type: ignore[attr-defined]
            out += [e for _, e in batch]

    tasks = [
        asyncio.create_task(drain(spec, received)),
        asyncio.create_task(drain(seat, seat_view)),
    ]
    for _ in range(30):
        game.step(5)
        await settle()
        with pytest.raises(Forbidden):
            await r.get_events("live", GOD)
        with pytest.raises(Forbidden):
            await r.get_events("live", 2, "seat-3")
    await game.finish()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    recs = await records(store, "live")
    truth = Truth(recs, n_cards(recs))
    leaks = [x for e in received for x in truth.leaks(seq_of(e), e, SPECTATOR)]
    leaks += [x for e in seat_view for x in truth.leaks(seq_of(e), e, 2)]
    assert not leaks, leaks[:5]
    assert received == (await r.get_events("live", SPECTATOR)).entries
    assert (await r.get_events("live", GOD)).entries  # open now that the game is over
    await r.close()


async def test_the_leak_search_bites() -> None:
    """The same search over unredacted (GOD) bytes of a live game finds hand cards."""
    store = InMemoryEventStore()
    await play_live(store, "g", players=5, seed=2)
    r = replay_of(store)
    recs = await records(store, "g")
    truth = Truth(recs, n_cards(recs))
    page = await r.get_events("g", GOD)
    found = [x for e in page.entries for x in truth.leaks(seq_of(e), e, SPECTATOR, GOD)]
    assert any("sees card" in x for x in found) and any("answer" in x for x in found)
    assert any("role" in x for x in found)


async def test_delay_holds_every_entry_back_by_at_least_the_delay() -> None:
    clock = ManualClock()
    store = InMemoryEventStore(clock=clock.now_ms)  # entries stamped with the test's clock
    delay = 10_000
    r = replay_of(store, clock=clock, policy=lambda h: TablePolicy(spectator_delay_ms=delay))
    game = LiveGame(store, "d", players=4, seed=9)
    await settle()
    got: list[tuple[int, int]] = []  # (seq, clock at receipt)

    async def watch() -> None:
        async for batch in await r.stream("d", SPECTATOR, delay_ms=1000):  # asks for less
            got.extend((seq, clock.now_ms()) for seq, _ in batch)

    task = asyncio.create_task(watch())
    await settle()
    feed = await r.feed("d")
    live_ticks = 0
    for tick in range(60):
        if tick < 40:
            game.step(1)
        await settle()
        page = await r.get_events("d", SPECTATOR)
        if page.over:  # an ended game hides nothing: no delay for new requests
            continue
        live_ticks += 1
        assert page.grant.delay_ms == delay
        at = feed.positions
        assert all(
            feed.at_ms[at.seq(SPECTATOR, seq_of(e)) - 1] + delay <= clock.now_ms()
            for e in page.entries
        )
        clock.advance(500)
        await settle()
    assert live_ticks > 30
    await game.finish()
    await settle()
    clock.advance(delay)
    await asyncio.wait_for(task, 5)
    assert got, "nothing delivered"
    release = {p: feed.at_ms[feed.positions.seq(SPECTATOR, p) - 1] + delay for p, _ in got}
    for p, at in got:
        assert at >= release[p], (p, at, release[p])
    # and not later than needed: each entry went out at the first tick at or past its release
    assert all(at - release[p] < 500 or at == got[-1][1] for p, at in got)
    assert [s for s, _ in got] == [seq_of(e) for e in (await r.get_events("d", SPECTATOR)).entries]
    assert feed.at_ms == [t for _, _, t in await store.read_timed("d")]  # the append times
    await r.close()


async def test_delay_counts_from_the_append_not_from_first_sight() -> None:
    """Entries appended long before this server reads them are released at append + delay (the
    same on every replica, and after a restart); entries with no time fall back to first sight."""
    clock = ManualClock()
    store = InMemoryEventStore(clock=clock.now_ms)
    game = LiveGame(store, "a", players=4, seed=3)
    await settle()
    game.step(10)
    await settle()
    appended = await store.head("a")
    clock.advance(4_000)
    game.step(10)
    await settle()
    clock.advance(3_000)  # now: first batch 7 s old, second 3 s old
    delay = 5_000
    r = replay_of(store, clock=clock, policy=lambda h: TablePolicy(spectator_delay_ms=delay))
    page = await r.get_events("a", SPECTATOR)  # a fresh server: first sight is now
    at = (await r.feed("a")).positions  # what a spectator is sent is numbered by its positions
    assert page.upto == at.position(SPECTATOR, appended)  # the 7 s old entries, not the 3 s old
    clock.advance(1_999)
    assert (await r.get_events("a", SPECTATOR)).upto == at.position(SPECTATOR, appended)
    clock.advance(1)
    head = at.position(SPECTATOR, await store.head("a"))
    assert (await r.get_events("a", SPECTATOR)).upto == head
    await game.finish()
    await r.close()

    feed = GameFeed("x", clock)
    recs = await store.read_timed("a")
    feed.add([(s, d, None if s > 3 else t) for s, d, t in recs[:6]], clock.now_ms())
    assert feed.at_ms[:3] == [t for _, _, t in recs[:3]] and feed.at_ms[3:] == [clock.now_ms()] * 3
    feed.add([(7, recs[6][1], 0)], 0)  # a clock that stepped back: never earlier than before
    assert feed.at_ms[6] == clock.now_ms()


async def test_resume_after_a_sequence_number_is_exact() -> None:
    store = InMemoryEventStore()
    await play_live(store, "g", players=5, seed=5)
    r = replay_of(store)
    full = [s for batch in [b async for b in await r.stream("g", SPECTATOR)] for s, _ in batch]
    cut = full[len(full) // 2]
    rest = [
        s
        for batch in [b async for b in await r.stream("g", SPECTATOR, after=cut)]
        for s, _ in batch
    ]
    assert full[: len(full) // 2 + 1] + rest == full


async def test_list_games_live_and_archived(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await play_live(store, "done", players=4, seed=1)
    await play_live(store, "old", players=5, seed=2, ruleset="honglou")
    await archive_game(store, "old", tmp_path)
    live = LiveGame(store, "now", players=6, seed=3)
    await settle()
    ids = ["done", "now"]

    async def live_ids() -> list[str]:
        return [g for g in ids if await store.head(g)]

    r = replay_of(store, archive_dir=tmp_path, live_ids=live_ids)
    games = {g.id: g for g in await r.list_games()}
    assert set(games) == {"done", "now", "old"}
    assert games["old"].archived and games["old"].finished and games["done"].finished
    assert not games["now"].finished and games["now"].version > 1
    assert [g.id for g in await r.list_games(GameFilter(status="live"))] == ["now"]
    assert [g.id for g in await r.list_games(GameFilter(ruleset="honglou"))] == ["old"]
    assert len(await r.list_games(GameFilter(player="bot5"))) == 1
    assert await r.list_games(GameFilter(since_ms=games["now"].start + 10**7)) == []
    assert len(await r.list_games(GameFilter(limit=2))) == 2
    old = await r.get_events("old", SPECTATOR)  # read back from the archive file
    assert old.over and old.entries
    assert (await r.verify("old")).ok and (await r.verify("done")).ok
    assert not (await r.verify("now")).ok
    await live.finish()
    await r.close()


async def test_page_fold_matches_views() -> None:
    """What a spectator receives folds to the same view as views.fold over the log."""
    store = InMemoryEventStore()
    await play_live(store, "g", players=5, seed=8)
    r = replay_of(store)
    from services.eventlog.entry import EVENT, decode_entry

    events = [
        api.decode_event(e.payload)
        for e in map(decode_entry, await records(store, "g"))
        if e.kind == EVENT
    ]
    import msgspec

    received = [msgspec.json.decode(e) for e in (await r.get_events("g", SPECTATOR)).entries]
    redacted = [
        api.decode_event(msgspec.msgpack.encode(x["event"]))
        for x in received
        if x["kind"] == "event"
    ]
    assert fold(redacted, SPECTATOR) == fold(events, SPECTATOR)


async def test_unknown_and_malformed_games() -> None:
    r = replay_of(InMemoryEventStore())
    with pytest.raises(NotFound):
        await r.get_events("nope", SPECTATOR)
    with pytest.raises(BadRequest):
        await r.get_events("bad{id}", SPECTATOR)
    with pytest.raises(NotFound):
        await r.verify("nope")


def test_every_role_of_every_ruleset_has_a_printed_name() -> None:
    """Pages name roles by the names the server sends (envelope.printed_names): seed 004's role
    ids are pinyin (chengxiang, pantu …), and a page showed them as they are."""
    from services.readside.catalogue import printed_names
    from services.rules import api

    for ruleset, rs in api.RULESETS.items():
        roles = {"pantu"} if ruleset == "extended" else set()  # 叛徒: turned to in play
        for players, options in rs.tables():
            roles |= set(rs.roles(players, api.resolve_options(ruleset, options)))
        names = printed_names(ruleset)
        plain = sorted(r for r in roles - {""} if names.get(r, r).isascii())
        assert not plain, (ruleset, plain)
    assert printed_names("honglou")["lord"] == "主人"  # a ruleset's own names come first


async def test_a_spectator_gets_the_end_from_the_archive_when_the_live_log_went_first(
    tmp_path: Path,
) -> None:
    """A game's last entries and its archiving (which drops the live log) can fall between two
    reads of a feed's tail; the feed then reads the rest from the archive, and its spectators
    get every entry and an end instead of waiting on a log that is gone."""
    store = InMemoryEventStore()
    await play_live(store, "gone", players=5, seed=8)
    recs = await records(store, "gone")
    await archive_game(store, "gone", tmp_path)  # the archive file holds the whole game
    # the live log as the feed last read it, mid-game; then the engine drops it
    live = InMemoryEventStore()
    await live.append("gone", 0, recs[: len(recs) // 2])
    r = replay_of(live, archive_dir=tmp_path)
    feed = await r.feed("gone")
    await feed.stop()  # between two reads of its tail
    await live.delete("gone")  # the live log is gone before the tail read the rest
    assert feed.version == len(recs) // 2 and not feed.over
    got: list[bytes] = []

    async def drain() -> None:
        async for batch in await r.stream("gone", SPECTATOR):
            got.extend(e for _, e in batch)

    await asyncio.wait_for(drain(), 10)  # ends: the feed reached the seed reveal
    assert feed.version == len(recs) and feed.closed
    assert got == (await r.get_events("gone", SPECTATOR)).entries
    truth = Truth(recs, n_cards(recs))
    assert not [x for e in got for x in truth.leaks(seq_of(e), e, SPECTATOR)]
    await r.close()
