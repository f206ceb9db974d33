"""The watchdog: no game is ever stuck.

The deadline sweep keeps games moving while their deadlines hold (service.py: a silent
person's and, past its deadline, a bot seat's decision answered by default; bot decisions
reposted; finishing completed). What it cannot see is a game it never reaches: a log with no
deadline at all, or one it fails on every time. So every `every_s` each engine worker looks
at every live log in Redis (SCAN, then each log's last entry, pipelined) against the
deadlines, and calls a game **stalled** when its log has not moved for `stall_ms` and nothing
it waits for is still to come: no deadline, or one already past (a person with time left on
a long clock is waiting, not stalled). A stalled game is

- reported: one line naming it and how long, `arena_engine_games_stalled` (the alert
  ArenaGamesStalled, deploy/prometheus);
- recovered: read again from its log and given its deadline (a bot decision is published
  again), the sweep's retry wait for it dropped;
- once it has not moved for `abandon_ms`, ended as abandoned: an `abandon` entry with reason
  `stalled` and its game_ended (a draw) in the log, finished and archived as any game is
  (`Games.abandon`);
- if even that fails (a log that cannot be read), said once, its deadlines dropped (so no
  sweep retries it) and its log left in Redis for an operator (`arena export`).

Every engine runs it; they may do the same work twice, and that is safe: recovering is
idempotent and ending is an append at an expected version (the second conflicts).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from prometheus_client import Gauge

from ..contracts.streams import partition_key, partitions
from ..eventlog.entry import SEED_REVEAL, decode_entry
from ..eventlog.records import Abandon
from ..redisinfra.reconnect import is_outage
from .service import Games, Refused

STALL_MS = 300_000  # a game whose log has not moved this long, with nothing to wait for
ABANDON_MS = 900_000  # ... and this long: ended as abandoned
EVERY_S = 60.0
STALLED = "stalled"  # game_ended's reason


@dataclass(frozen=True)
class Head:
    """A live log's last entry: its kind and when it was appended (ms, Redis TIME)."""

    game: str
    kind: str
    at: int | None


class RedisLogs:
    """The live logs and the deadlines of a namespace, read from Redis."""

    def __init__(self, client: Any, namespace: str) -> None:
        self.client, self.ns = client, namespace

    async def heads(self, batch: int = 500) -> AsyncIterator[Head]:
        """Every game log's last entry (SCAN for the keys, one pipelined XREVRANGE a batch)."""
        keys: list[bytes | str] = []
        async for key in self.client.scan_iter(match=f"{self.ns}:{{*}}:g:*:log", count=1000):
            keys.append(key)
            if len(keys) >= batch:
                for head in await self._heads(keys):
                    yield head
                keys = []
        for head in await self._heads(keys):
            yield head

    async def _heads(self, keys: list[bytes | str]) -> list[Head]:
        if not keys:
            return []
        async with self.client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.xrevrange(key, "+", "-", count=1)
            replies: list[Any] = await pipe.execute()
        out = []
        for key, rows in zip(keys, replies, strict=True):
            if not rows:
                continue
            text = key.decode() if isinstance(key, bytes) else key
            game = text.split(":g:", 1)[1].rsplit(":log", 1)[0]
            fields = rows[0][1]
            try:
                kind = decode_entry(fields[b"e"]).kind
            except (KeyError, msgspec.MsgspecError):
                kind = "?"  # unreadable: judged by its age alone
            t = fields.get(b"t")
            out.append(Head(game, kind, int(t) if t is not None else None))
        return out

    async def deadlines(self) -> dict[str, int]:
        """Each game with a deadline, and its earliest (ms)."""
        async with self.client.pipeline(transaction=False) as pipe:
            for p in range(partitions()):
                pipe.zrange(partition_key(self.ns, p, "deadlines"), 0, -1, withscores=True)
            replies: list[Any] = await pipe.execute()
        out: dict[str, int] = {}
        for reply in replies:
            for member, score in reply:
                text = member.decode() if isinstance(member, bytes) else str(member)
                game = text.rpartition("|")[0]
                out[game] = min(out.get(game, int(score)), int(score))
        return out


class Watchdog:
    """Finds the stalled games of a namespace and recovers or ends them (module docstring)."""

    def __init__(
        self,
        games: Games,
        logs: RedisLogs,
        *,
        stall_ms: int = STALL_MS,
        abandon_ms: int = ABANDON_MS,
        say: Callable[[str], None] = print,
    ) -> None:
        self.games, self.logs = games, logs
        self.stall_ms, self.abandon_ms = stall_ms, max(abandon_ms, stall_ms)
        self.say = say
        self.seen: dict[str, int] = {}  # stalled game -> the last move it was reported at
        self.given_up: set[str] = set()
        self.stalled = Gauge(
            "arena_engine_games_stalled",
            "games whose log has not moved for the watchdog's --stall-after-ms with nothing "
            "to wait for (no deadline, or one long past): recovered, or ended as abandoned",
            registry=games.metrics.registry,
        )

    async def once(self, now_ms: int | None = None) -> list[str]:
        """One look at every live log; returns the games found stalled."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        deadlines = await self.logs.deadlines()
        stalled: list[tuple[Head, int | None]] = []
        async for head in self.logs.heads():
            if head.kind == SEED_REVEAL or head.at is None or now - head.at < self.stall_ms:
                continue  # finished, from before append times, or moving
            due = deadlines.get(head.game)
            if due is not None and due > now:
                continue  # waiting: a person with time left on the clock
            stalled.append((head, due))
        self.stalled.set(len(stalled))
        for head, due in stalled:
            if head.game not in self.given_up:
                await self._handle(head, due, now)
        still = {h.game for h, _ in stalled}
        self.seen = {g: at for g, at in self.seen.items() if g in still}
        self.given_up &= still
        return sorted(still)

    async def _handle(self, head: Head, due: int | None, now: int) -> None:
        assert head.at is not None
        quiet = now - head.at
        game = head.game
        waits = (
            "no deadline" if due is None else f"its deadline passed {(now - due) / 1000:.0f} s ago"
        )
        try:
            if quiet >= self.abandon_ms:
                end = Abandon(STALLED, f"no move for {quiet // 1000} s ({waits})")
                if await self.games.abandon(game, end):
                    self.say(
                        f"watchdog: game {game} did not move for {quiet / 1000:.0f} s "
                        f"({waits}): ended as abandoned"
                    )
                return
            await self.games.recover(game)
            if self.seen.get(game) != head.at:  # once per stall, not every round
                self.seen[game] = head.at
                self.say(
                    f"watchdog: game {game} has not moved for {quiet / 1000:.0f} s "
                    f"({waits}): read again from its log and given its deadline"
                )
        except Exception as exc:
            if is_outage(exc):
                raise
            if isinstance(exc, Refused) and exc.code == "NOT_FOUND":
                return  # archived meanwhile
            self.given_up.add(game)
            with contextlib.suppress(Exception):
                await self.games.drop_deadlines(game)
            self.say(
                f"watchdog: game {game} did not move for {quiet / 1000:.0f} s and cannot be "
                f"recovered or ended ({exc!r}); its deadlines are dropped and its log is left "
                "in Redis for an operator (arena export)"
            )

    async def run(self, stop: asyncio.Event, every_s: float = EVERY_S) -> None:
        """Look every `every_s` until `stop` is set; a failed round (Redis away) waits for the
        next (the outage is said by the loops that need Redis)."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)
            if stop.is_set():
                return
            try:
                await self.once()
            except Exception as exc:  # noqa: BLE001 - the watchdog must outlive any round
                if not is_outage(exc):
                    self.say(f"watchdog: a round failed: {exc!r}")
