"""A live game the test moves forward one answer at a time."""

from __future__ import annotations

import asyncio
from typing import Any

from services.bots.demo import play_live
from services.eventlog.store import EventStore


async def settle(rounds: int = 50) -> None:
    """Let every ready task run (in-memory store: appends and wake-ups need no I/O)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


class LiveGame:
    """``play_live`` gated by a queue: ``step(n)`` lets n more answers through."""

    def __init__(
        self, store: EventStore, game: str, players: int = 5, seed: int = 1, **kw: Any
    ) -> None:
        self.gate: asyncio.Queue[None] = asyncio.Queue()
        self.task = asyncio.create_task(
            play_live(store, game, players=players, seed=seed, pace=self._pace, **kw)
        )

    async def _pace(self, version: int) -> None:
        await self.gate.get()

    def step(self, n: int = 1) -> None:
        """Let ``n`` more answers be recorded."""
        for _ in range(n):
            self.gate.put_nowait(None)

    async def finish(self) -> None:
        """Let the game run to its end."""
        while not self.task.done():
            self.step(50)
            await asyncio.sleep(0)
        await self.task
