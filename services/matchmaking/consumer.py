"""The `arena:finished` consumer: each finished game counts once in its players' ratings.

Delivery is at-least-once (consumer group from id 0, XAUTOCLAIM takeover, dead letters: see
services/redisinfra/streams.py); exactly-once counting comes from the per-game record in
`RatingStore.record`, so a redelivered or republished announcement changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from ..contracts.streams import FINISHED, BadMessage, GameFinished, decode
from ..eventlog.store import EventStore, check_game_id
from ..redisinfra.streams import GroupConsumer, Message
from .metrics import Metrics
from .rating_store import RatingStore
from .ratings import fold
from .results import NotSigned, load_result, scan_archive

GROUP = FINISHED.groups[0]


class Ratings:
    """Rates finished games from their logs (or archive files) into a RatingStore."""

    def __init__(
        self,
        store: EventStore,
        ratings: RatingStore,
        archive_dir: Path | None,
        metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.ratings = ratings
        self.archive_dir = archive_dir
        self.metrics = metrics or Metrics()

    async def rate(self, game: str) -> bool:
        """Count one finished game; False if it already counted."""
        result = await load_result(self.store, check_game_id(game), self.archive_dir)
        counted = await self.ratings.record(result)
        self.metrics.count("ratings", "rated" if counted else "duplicate")
        return counted

    async def on_finished(self, consumer: GroupConsumer, msg: Message) -> None:
        """Handle one arena:finished message; a message naming no valid game is dead-lettered
        at once, a game not readable yet is retried (then dead-lettered by the group)."""
        try:
            game = check_game_id(decode(msg.fields, GameFinished).game)
        except (BadMessage, ValueError) as exc:
            await consumer.dead_letter(msg, f"bad finished message: {exc}")
            return
        try:
            await self.rate(game)
        except NotSigned as exc:  # refused for good (results.py logged it): not retried
            await consumer.dead_letter(msg, f"not rated: {exc}")


async def rebuild(
    folder: Path, ratings: RatingStore | None = None
) -> tuple[dict[str, dict[str, tuple[float, float, int]]], dict[str, str]]:
    """Ratings recomputed from the archive folder alone; with `ratings`, stored in place of the
    live ones. Returns ({mode: {player: (mu, sigma, games)}}, {file: why skipped})."""
    results, skipped = scan_archive(folder)
    tables = await ratings.replace(results) if ratings is not None else fold(results)
    out = {
        mode: {p: (r.mu, r.sigma, r.games) for p, r in sorted(t.items())}
        for mode, t in sorted(tables.items())
    }
    return out, skipped
