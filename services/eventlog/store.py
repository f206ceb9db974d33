"""The event-store port: the narrow interface every adapter implements.

A store keeps, per game, an append-only sequence of opaque byte records numbered 1, 2, 3, …
The version of a game is the number of its last record (0 for an empty game). Everything above
this port (entry codec, hash chain, snapshots of engine state) treats records as bytes, so the
adapters stay small and the contract tests can pin their behaviour exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import msgspec

from ..contracts.streams import check_game_id as check_game_id  # where game ids are keys

Record = tuple[int, bytes]
"""One stored record: (sequence number, bytes)."""

TimedRecord = tuple[int, bytes, int | None]
"""A record with its append time: (sequence number, bytes, ms since the epoch or None).

The time is taken by the store when the batch is appended (Redis: the server's TIME inside the
append script; in memory: the adapter's clock), once per batch, and kept beside the record, not
in it: the record bytes, and so the hash chain over them, are the same with or without it.
None for a record written before stores kept times.
"""


class VersionConflict(Exception):
    """An append named an expected version that is not the game's current version."""

    def __init__(self, game: str, expected: int, actual: int) -> None:
        super().__init__(f"game {game!r}: expected version {expected}, actual {actual}")
        self.game = game
        self.expected = expected
        self.actual = actual


class Snapshot(msgspec.Struct, frozen=True, array_like=True):
    """Engine state as of `version`, plus the chain hash of that entry so writing can go on."""

    version: int
    chain_hash: bytes
    state: bytes


@runtime_checkable
class EventStore(Protocol):
    """Append-only, per-game record store with optimistic concurrency.

    All methods are coroutines: the engine worker is asyncio-based, and the in-memory adapter
    keeps the same shape so pure tests and services can swap one for the other.
    """

    async def append(self, game: str, expected_version: int, records: Sequence[bytes]) -> int:
        """Append `records` atomically if the game's version is `expected_version`.

        Returns the new version. Raises VersionConflict (carrying the actual version) and
        writes nothing otherwise. An empty batch only checks the version.
        """
        ...

    async def read(self, game: str, after: int = 0, upto: int | None = None) -> list[Record]:
        """Records with `after < seq <= upto` (to the end if `upto` is None), in order."""
        ...

    async def tail(self, game: str, after: int, block_ms: int) -> list[Record]:
        """Records after `after`; if there are none, wait up to `block_ms` for some.

        Returns an empty list on time-out. `block_ms == 0` does not wait.
        """
        ...

    async def read_timed(
        self, game: str, after: int = 0, upto: int | None = None
    ) -> list[TimedRecord]:
        """Like `read`, with each record's append time."""
        ...

    async def tail_timed(self, game: str, after: int, block_ms: int) -> list[TimedRecord]:
        """Like `tail`, with each record's append time."""
        ...

    async def head(self, game: str) -> int:
        """The game's current version (0 if it has no records)."""
        ...

    async def save_snapshot(self, game: str, snapshot: Snapshot) -> bool:
        """Keep `snapshot` unless a snapshot at the same or a later version is stored.

        Returns whether it was stored. Refuses a snapshot beyond the game's head.
        """
        ...

    async def load_snapshot(self, game: str) -> Snapshot | None:
        """The latest stored snapshot, or None."""
        ...

    async def delete(self, game: str) -> None:
        """Drop the game's records and snapshot (after it has been archived)."""
        ...
