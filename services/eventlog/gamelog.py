"""A game's log as the engine worker sees it: typed entries, chained, over any EventStore.

Writing: `GameLog.start` appends the header at version 0; every later append seals its entries
onto the current head hash and appends at the current version, so a stale worker gets
VersionConflict and must reload. Loading a long game is the latest snapshot plus the entries
after it (`GameLog.load`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from .entry import (
    ANSWER,
    EVENT,
    GENESIS,
    HEADER,
    SEED_REVEAL,
    Entry,
    decode_entry,
    first_break,
    framing_crc,
    seal_records,
)
from .records import AnswerRecord, Header, SeedReveal, encode_payload
from .store import EventStore, Snapshot, check_game_id

Write = Callable[[int, list[bytes]], Awaitable[int]]
"""Stores sealed records after an expected version and returns the new version."""


class ChainBroken(Exception):
    """Stored entries do not chain; `seq` names the first bad one."""

    def __init__(self, game: str, seq: int) -> None:
        super().__init__(f"game {game!r}: hash chain broken at entry {seq}")
        self.game = game
        self.seq = seq


@dataclass
class GameLog:
    """Writer for one game: knows the version and head hash it will append after, and, for a
    log it wrote from the start, the `framing_crc` of every record it sealed (`sealed_crc`:
    None for a log it took up at a later version, or once a write's records went unsaid)."""

    store: EventStore
    game: str
    version: int = 0
    head_hash: bytes = GENESIS
    sealed_crc: int | None = None

    def __post_init__(self) -> None:
        if self.version == 0:  # every record of the log will be one this writer seals
            self.sealed_crc = 0

    @classmethod
    async def start(cls, store: EventStore, header: Header) -> GameLog:
        """Create the game's log with its header entry (conflicts if it already exists)."""
        log = cls(store, check_game_id(header.game_id))
        await log.append([(HEADER, encode_payload(header))])
        return log

    @classmethod
    async def load(cls, store: EventStore, game: str, use_snapshot: bool = True) -> Loaded:
        """The latest snapshot (if any) and the entries after it, chain-checked; without
        ``use_snapshot`` every entry (for a snapshot the engine can no longer read)."""
        snap = await store.load_snapshot(game) if use_snapshot else None
        after, prev = (snap.version, snap.chain_hash) if snap else (0, GENESIS)
        records = await store.read(game, after)
        entries = [decode_entry(data) for _, data in records]
        bad = first_break(prev, after + 1, entries)
        if bad is not None:
            raise ChainBroken(game, after + 1 + bad)
        version = records[-1][0] if records else after
        head = entries[-1].hash if entries else prev
        return Loaded(cls(store, game, version, head), snap, entries)

    async def append(self, items: Sequence[tuple[str, bytes]], write: Write | None = None) -> int:
        """Seal and append (kind, payload) items in one atomic batch; returns the new version.

        `write(expected_version, records)` stores the sealed records instead of the store's own
        append (the engine passes one that also publishes what the append makes due).
        """
        records, head = self.sealed(items)
        if write is None:
            version = await self.store.append(self.game, self.version, records)
        else:
            version = await write(self.version, records)
        self.wrote(version, head, records)
        return self.version

    def sealed(self, items: Sequence[tuple[str, bytes]]) -> tuple[list[bytes], bytes]:
        """The stored bytes of (kind, payload) items chained onto the head, and the hash the
        head will have once they are written: an append in two steps, for a caller that writes
        several games' records at once (the engine's batch of bot answers) and then calls
        `wrote`."""
        return seal_records(self.head_hash, self.version + 1, items)

    def wrote(self, version: int, head_hash: bytes, records: Sequence[bytes] | None = None) -> None:
        """Records sealed by `sealed` are stored: the log is at `version`, its head `head_hash`
        (`records`: those records, for `sealed_crc`; without them it is no longer known)."""
        if self.sealed_crc is not None:
            if records is not None and version == self.version + len(records):
                self.sealed_crc = framing_crc(records, self.sealed_crc)
            else:
                self.sealed_crc = None
        self.version, self.head_hash = version, head_hash

    async def record_events(self, events: Sequence[bytes]) -> int:
        """Append engine events (already encoded with `api.encode_event`)."""
        return await self.append([(EVENT, e) for e in events])

    async def record_answer(
        self,
        answer: AnswerRecord,
        events: Sequence[bytes],
        write: Write | None = None,
        after: Sequence[tuple[str, bytes]] = (),
    ) -> int:
        """Append an accepted answer and the events it produced, atomically (with `after`:
        entries that belong to the same step, such as a seat going on 托管)."""
        return await self.append(
            [(ANSWER, encode_payload(answer))] + [(EVENT, e) for e in events] + list(after), write
        )

    async def finish(self, reveal: SeedReveal, events: Sequence[bytes] = ()) -> int:
        """Append any last events and the seed reveal that closes the log."""
        return await self.append(
            [(EVENT, e) for e in events] + [(SEED_REVEAL, encode_payload(reveal))]
        )

    async def save_snapshot(self, state: bytes) -> bool:
        """Store engine state as of the current version (state must match that version)."""
        return await self.store.save_snapshot(
            self.game, Snapshot(self.version, self.head_hash, state)
        )


def snapshot_due(before: int, after: int, every: int) -> bool:
    """Whether an append moving the version from `before` to `after` crossed a multiple of `every`."""
    return every > 0 and after // every > before // every


@dataclass
class Loaded:
    """What `GameLog.load` returns: a writer positioned at the head, the snapshot, the tail."""

    log: GameLog
    snapshot: Snapshot | None
    tail: list[Entry] = field(default_factory=list)
