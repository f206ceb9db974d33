"""A live random-bot game recorded at a watchable pace: for the viewer's tests and benchmarks.

Recorded by services/verify/record.py's `record_game` (as the engine worker records games:
header, the events of ``advance``, one batch per accepted answer, the seed reveal), with the
seeded `random` policy answering every decision (seat i: seed x 1000 + i) and an awaitable
``pace`` before each answer, so spectators can watch it unfold. Demo games on a running
platform are `arena up --demo` (services/platform/demo.py).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from ..eventlog.gamelog import GameLog
from ..eventlog.store import EventStore
from ..verify import default_engine
from ..verify.record import Pace, record_game
from .random_policy import RandomPolicy


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
    bots = [RandomPolicy(seed * 1000 + i) for i in range(players)]

    def choose(decision: Any, rng: random.Random) -> list[str]:
        return list(bots[decision.seat].act(decision).picks)

    return await record_game(
        store,
        game_id,
        default_engine(),
        ruleset,
        players,
        seed,
        options=options,
        choose=choose,
        pace=pace,
    )
