"""A live bot game recorded at a watchable pace: for tests, the benchmark and ``--demo``.

Recorded exactly like the engine worker records games (header, the events of ``advance``, one
batch per accepted answer, the seed reveal), with random bots answering every decision and an
awaitable ``pace`` between answers, so spectators can watch it unfold.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..bots.random_policy import RandomPolicy
from ..eventlog.gamelog import GameLog
from ..eventlog.records import AnswerRecord, Header, Seat, SeedReveal, commit_seed, new_salt
from ..eventlog.store import EventStore
from ..rules import api

Pace = Callable[[int], Awaitable[None]]
"""Awaited before each answer with the log version so far."""


def sleeper(ms: float) -> Pace:
    """A pace that sleeps ``ms`` between answers."""

    async def pace(version: int) -> None:
        await asyncio.sleep(ms / 1000)

    return pace


async def play_live(
    store: EventStore,
    game_id: str,
    ruleset: str = "standard",
    players: int = 5,
    seed: int = 1,
    pace: Pace | None = None,
    options: dict[str, Any] | None = None,
) -> GameLog:
    """Play a random-bot game into ``store``, awaiting ``pace`` before every answer."""
    salt = new_salt()
    header = Header(
        game_id=game_id,
        ruleset=ruleset,
        players=players,
        rules_version=api.RULES_VERSION,
        seats=[Seat(f"bot{i}", True) for i in range(players)],
        seed_commitment=commit_seed(seed, salt),
        options=options or {},
        started_at_ms=int(time.time() * 1000),
    )
    log = await GameLog.start(store, header)
    game = api.new_game(ruleset, players, seed, options)
    await log.record_events([api.encode_event(e) for e in api.advance(game)])
    bots = [RandomPolicy(seed * 1000 + i) for i in range(players)]
    winners: list[int] = []
    while not api.is_over(game):
        decision = api.pending(game)
        if decision is None:
            break
        if pace is not None:
            await pace(log.version)
        answer = bots[decision.seat].act(decision)
        events = api.submit(game, answer)
        record = AnswerRecord(answer.decision, answer.seat, list(answer.picks))
        await log.record_answer(record, [api.encode_event(e) for e in events])
        for e in events:
            winners = list(getattr(e, "winner_seats", winners))
    reveal = SeedReveal(seed=seed, salt=salt, ended_at_ms=int(time.time() * 1000), winners=winners)
    await log.finish(reveal)
    return log
