"""The lobby and a game's summary count what a spectator has been sent, no more: under a
spectator delay they stopped nowhere (the live head, ahead of the delayed table), and they
counted the answers withheld from spectators (the gap between the count and the entries a
spectator holds was the number of hidden prompts answered)."""

from __future__ import annotations

from services.contracts import tokens
from services.engine.service import Games, NewMatch
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.readside.access import TablePolicy
from services.readside.clock import ManualClock
from services.replay.core import Replay
from services.rules import api

SECRET = b"lobby-delay"
DELAY = 30_000


async def _live_ids() -> list[str]:
    return ["g1"]


async def _game(games: Games, clock: ManualClock, answers: int) -> None:
    """A 5-seat game moved on by answers, the clock moving 1 s per answer."""
    await games.create_game(
        NewMatch(match_id="g1", ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)], seed=5)
    )
    for _ in range(answers):
        hot = await games.get("g1")
        d = api.pending(hot.game)
        assert d is not None and not hot.game.over
        clock.advance(1_000)
        picks = list(api.default_answer(d).picks)
        token = tokens.issue(SECRET, "g1", d.seat)
        await games.submit_action("g1", token, (await games.get("g1")).ids.opaque(d.id), picks)


async def test_lobby_counts_only_what_a_delayed_spectator_holds() -> None:
    clock = ManualClock()
    store = InMemoryEventStore(clock.now_ms)
    games = Games(store, MemorySide(), SECRET, clock=clock)
    replay = Replay(
        store, clock=clock, policy=lambda h: TablePolicy(DELAY), live_ids=_live_ids, idle_ms=10**9
    )
    try:
        await _game(games, clock, 60)
        head = await store.head("g1")

        async def shown() -> tuple[int, int, int]:
            (g,) = await replay.list_games()
            page = await replay.get_events("g1", api.SPECTATOR)
            return g.version, (await replay.summary("g1")).version, len(page.entries)

        lobby, summary, held = await shown()
        assert (lobby, summary) == (held, held)  # nothing past the delay…
        assert 0 < held < head - 30  # …and the last 30 s of answers are held back
        clock.advance(DELAY)  # every entry released: still only what a spectator receives
        lobby, summary, held = await shown()
        assert (lobby, summary) == (held, held)
        assert held < head  # the answers, withheld from spectators, are not counted
    finally:
        await replay.close()
