"""Time for matchmaking, injectable: every wait, time-to-live and enqueue time reads a Clock."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Milliseconds since the epoch."""

    def now_ms(self) -> int:
        """The current time."""
        ...


class SystemClock:
    """The wall clock."""

    def now_ms(self) -> int:
        """See Clock.now_ms."""
        return int(time.time() * 1000)


class ManualClock:
    """A clock that moves only when told to (tests, simulations)."""

    def __init__(self, start_ms: int | None = None) -> None:
        self.ms = int(time.time() * 1000) if start_ms is None else start_ms

    def now_ms(self) -> int:
        """See Clock.now_ms."""
        return self.ms

    def advance(self, ms: int) -> int:
        """Move forward by `ms`; returns the new time."""
        self.ms += ms
        return self.ms
