"""Arena's event log: per-game append-only logs, hash chains, snapshots, archive and verify."""

from .memory import InMemoryEventStore
from .redis_store import RedisEventStore
from .store import EventStore, Record, Snapshot, VersionConflict

__all__ = [
    "EventStore",
    "InMemoryEventStore",
    "Record",
    "RedisEventStore",
    "Snapshot",
    "VersionConflict",
]
