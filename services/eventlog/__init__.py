"""Arena's event log: per-game append-only logs, hash chains, snapshots, archives, the catalog.

Verifying a log against the rules (and the `arena export/verify/archive` commands) is
services/verify, above this package; the Redis machinery under it is services/redisinfra.

See README.md beside this file for the storage layout, the entry format and the seed commitment.
"""

from .catalog import CatalogRecord, archive_game, load_catalog, rebuild_catalog
from .checks import VerifyReport
from .gamelog import GameLog, snapshot_due
from .memory import InMemoryEventStore
from .records import AnswerRecord, Header, Seat, SeedReveal, commit_seed, new_salt
from .redis_store import RedisEventStore
from .store import EventStore, Record, Snapshot, VersionConflict

__all__ = [
    "AnswerRecord",
    "CatalogRecord",
    "EventStore",
    "GameLog",
    "Header",
    "InMemoryEventStore",
    "Record",
    "RedisEventStore",
    "Seat",
    "SeedReveal",
    "Snapshot",
    "VerifyReport",
    "VersionConflict",
    "archive_game",
    "commit_seed",
    "load_catalog",
    "new_salt",
    "rebuild_catalog",
    "snapshot_due",
]
