"""Arena's event log: per-game append-only logs, hash chains, snapshots, archive and verify.

See README.md beside this file for the storage layout, the entry format and the seed commitment.
"""

from .catalog import CatalogRecord, archive_game, load_catalog, rebuild_catalog
from .commands import export_game, verify_game
from .gamelog import GameLog, snapshot_due
from .memory import InMemoryEventStore
from .records import AnswerRecord, Header, Seat, SeedReveal, commit_seed, new_salt
from .redis_store import RedisEventStore
from .store import EventStore, Record, Snapshot, VersionConflict
from .verify import VerifyReport, verify

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
    "export_game",
    "load_catalog",
    "new_salt",
    "rebuild_catalog",
    "snapshot_due",
    "verify",
    "verify_game",
]
