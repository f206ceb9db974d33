"""Keeping the shared streams bounded: trim below what every group has acknowledged.

Nothing trims a stream on its own, so `{ns}:decisions` (one entry per bot decision, ~1 KB)
grew by ~250 KB per game. `StreamKeeper` runs in the engine workers and the matchmaker; every
`interval_s` it reads each shared stream's groups and trims with `XTRIM MINID` to the oldest
entry some group still needs:

- a group needs its oldest pending entry (delivered, not acked: its consumer may still fail or
  die, and XAUTOCLAIM hands it to another), and everything after its last-delivered id;
- a group that the stream is read by (`SharedStream.groups`) but that does not exist yet
  needs everything: groups are created from id 0 so that what was published before the first
  worker started is still read (a matchmaker started later rates every finished game), so the
  stream is not trimmed at all until it exists;
- a reader without a group gets a time window instead: `retention_ms` keeps entries younger than
  that whatever the groups acked. `arena tournament` follows `finished` with a plain XREAD, so
  `finished` keeps 10 minutes (`RETENTION_MS`; a tournament that falls further behind finds its
  games in the archive, as it does after a restart).

So an entry is removed only once every group has acked it (and, for `finished`, it is older
than the window). Safe points only move forward (delivery and acks move them on; nothing moves
them back but an operator's XGROUP SETID), so reading the groups and trimming need not be one
atomic step, and several keepers at once (one per engine worker) do no harm. `XTRIM MINID ~`
removes whole stream nodes only: a few entries below the safe point may stay until the next
round. A group that stops acking stops the trimming: that is what the lag and oldest-unacked
metrics, and the ArenaStreamGroupStuck alert in deploy/prometheus, are for.

The same reading gives the metrics (per stream and group): length, pending (delivered, not
acked), lag (not yet delivered; Redis 7 reports it exactly, on Redis 6.2 it is counted up to
`LAG_CAP`), and the age of the oldest entry the group has not acked. The dead-letter stream is
bounded separately (`streams.DEAD_MAXLEN`: it has no readers, only the newest are kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from prometheus_client import CollectorRegistry, Counter, Gauge
from redis.exceptions import ResponseError

from ..contracts.streams import FINISHED, SHARED, SharedStream, stream_keys
from .reconnect import is_outage, outage_words

RETENTION_MS: Mapping[str, int] = {FINISHED.name: 600_000}
"""Per shared stream, how long entries stay whatever the groups acked (readers without a group)."""

LAG_CAP = 10_000
"""On Redis < 7 the lag is counted with XRANGE, up to this many entries."""

_LAG_LUA = """
local rows = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+', 'COUNT', tonumber(ARGV[2]))
if #rows == 0 then return {0, false} end
return {#rows, rows[1][1]}
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _parse_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _next_id(entry_id: str) -> str:
    """The smallest id after `entry_id`."""
    ms, seq = _parse_id(entry_id)
    return f"{ms}-{seq + 1}"


@dataclass(frozen=True)
class GroupState:
    """What one group of a stream has done: `needs` is the oldest entry it still needs (its
    oldest pending entry, else the one after its last-delivered id)."""

    group: str
    consumers: int
    pending: int
    lag: int
    last_delivered: str
    needs: str
    oldest_unacked: str | None  # oldest pending or undelivered entry; None: all acked


@dataclass(frozen=True)
class StreamState:
    """A stream's length, its groups, the groups it should have that are missing, and Redis's
    clock (ms) when read."""

    key: str
    length: int
    groups: tuple[GroupState, ...]
    missing: tuple[str, ...]
    now_ms: int

    def safe_minid(self, retention_ms: int = 0) -> str | None:
        """The id to trim below (XTRIM MINID): every group has acked every entry before it and
        it is at most `retention_ms` old. None: nothing may go (a group is missing, or there is
        no group and no window)."""
        if self.missing or (not self.groups and retention_ms <= 0):
            return None
        needed = [_parse_id(g.needs) for g in self.groups]
        if retention_ms > 0:
            needed.append((max(0, self.now_ms - retention_ms), 0))
        ms, seq = min(needed)
        return f"{ms}-{seq}"

    def age_s(self, entry_id: str | None) -> float:
        """Seconds since `entry_id` was added (0 for None)."""
        if entry_id is None:
            return 0.0
        return max(0.0, (self.now_ms - _parse_id(entry_id)[0]) / 1000)


def merge_states(states: list[StreamState]) -> StreamState:
    """One state for a stream's partitions: lengths, pending and lag add up; a group's oldest
    unacked entry is the oldest of any partition; a group missing anywhere is missing."""
    groups: dict[str, GroupState] = {}
    for state in states:
        for g in state.groups:
            had = groups.get(g.group)
            if had is None:
                groups[g.group] = g
                continue
            olds = [i for i in (had.oldest_unacked, g.oldest_unacked) if i is not None]
            groups[g.group] = GroupState(
                g.group,
                max(had.consumers, g.consumers),
                had.pending + g.pending,
                had.lag + g.lag,
                max(had.last_delivered, g.last_delivered, key=_parse_id),
                min(had.needs, g.needs, key=_parse_id),
                min(olds, key=_parse_id) if olds else None,
            )
    missing = tuple(dict.fromkeys(m for state in states for m in state.missing))
    return StreamState(
        states[0].key if len(states) == 1 else "",
        sum(state.length for state in states),
        tuple(groups.values()),
        missing,
        max(state.now_ms for state in states),
    )


async def read_state(
    client: aioredis.Redis, key: str, expected_groups: Iterable[str] = ()
) -> StreamState:
    """Read stream `key`: its length, every group's progress, and which of `expected_groups`
    do not exist."""
    return (await read_states(client, [(key, tuple(expected_groups))]))[0]


async def read_states(
    client: aioredis.Redis, streams: Sequence[tuple[str, Iterable[str]]]
) -> list[StreamState]:
    """`read_state` for many (key, expected groups) at once, in three round trips (Redis's
    TIME; each stream's XLEN and XINFO GROUPS, pipelined; then each group's XPENDING and lag
    count, pipelined). TIME goes on its own: a Redis Cluster client refuses it in a pipeline
    (it names no key, so no node), and every round on a cluster failed so."""
    now = await client.time()  # (Redis's clock, for the ages; on a cluster, any node's)
    now_ms = int(now[0]) * 1000 + int(now[1]) // 1000
    async with client.pipeline(transaction=False) as pipe:
        for key, _ in streams:
            pipe.xlen(key)
            pipe.xinfo_groups(key)
        replies: list[Any] = await pipe.execute(raise_on_error=False)
    read: list[tuple[str, int, list[Any]]] = []
    for i, (key, _) in enumerate(streams):
        length, infos = replies[2 * i : 2 + 2 * i]
        if isinstance(infos, ResponseError) and "no such key" in str(infos).lower():
            infos = []
        for reply in (length, infos):
            if isinstance(reply, Exception):
                raise reply
        read.append((key, int(length), list(infos)))
    async with client.pipeline(transaction=False) as pipe:
        for key, _, infos in read:
            for info in infos:
                pipe.xpending(key, _text(info["name"]))
                pipe.execute_command(
                    "EVAL", _LAG_LUA, 1, key, _text(info["last-delivered-id"]), LAG_CAP
                )
        asked = any(infos for _, _, infos in read)
        counts: list[Any] = await pipe.execute(raise_on_error=False) if asked else []
    for reply in counts:
        if isinstance(reply, Exception):
            raise reply
    out: list[StreamState] = []
    k = 0
    for (key, length, infos), (_, expected) in zip(read, streams, strict=True):
        groups = []
        for info in infos:
            groups.append(_group_state(info, counts[k], counts[k + 1]))
            k += 2
        names = {g.group for g in groups}
        missing = tuple(g for g in expected if g not in names)
        out.append(StreamState(key, length, tuple(groups), missing, now_ms))
    return out


def _group_state(info: Mapping[str, Any], summary: Any, counted: Any) -> GroupState:
    name = _text(info["name"])
    last = _text(info["last-delivered-id"])
    pending = int(summary["pending"])
    oldest_pending = _text(summary["min"]) if pending and summary["min"] is not None else None
    oldest_unread = _text(counted[1]) if counted[1] else None
    lag = info.get("lag")
    lag = int(lag) if lag is not None else int(counted[0])  # Redis 7 knows it exactly
    needs = oldest_pending if oldest_pending is not None else _next_id(last)
    candidates = [i for i in (oldest_pending, oldest_unread) if i is not None]
    oldest = min(candidates, key=_parse_id) if candidates else None
    return GroupState(name, int(info["consumers"]), pending, lag, last, needs, oldest)


async def trim_acked(
    client: aioredis.Redis,
    key: str,
    expected_groups: Iterable[str] = (),
    retention_ms: int = 0,
    *,
    approximate: bool = True,
) -> tuple[StreamState, int]:
    """Trim stream `key` below what every group acked (see the module doc); returns the state
    read before trimming and how many entries went. `approximate` (`MINID ~`) removes whole
    stream nodes only, which is cheaper; exact trimming also removes the first node's part."""
    [(state, removed)] = await trim_all(
        client, [(key, tuple(expected_groups), retention_ms)], approximate=approximate
    )
    return state, removed


async def trim_all(
    client: aioredis.Redis,
    streams: Sequence[tuple[str, Iterable[str], int]],
    *,
    approximate: bool = True,
) -> list[tuple[StreamState, int]]:
    """`trim_acked` for many (key, expected groups, retention ms) at once: three pipelined
    round trips however many streams (a keeper's round over 16 partitions' streams was ~350
    round trips, one per command)."""
    states = await read_states(client, [(key, groups) for key, groups, _ in streams])
    trims = []
    for state, (_, _, retention_ms) in zip(states, streams, strict=True):
        minid = state.safe_minid(retention_ms)
        trims.append(None if minid is None or state.length == 0 else minid)
    removed: list[Any] = []
    if any(m is not None for m in trims):
        async with client.pipeline(transaction=False) as pipe:
            for state, minid in zip(states, trims, strict=True):
                if minid is not None:
                    pipe.xtrim(state.key, minid=minid, approximate=approximate)
            removed = await pipe.execute()
    gone = iter(removed)
    return [
        (s, int(next(gone)) if m is not None else 0) for s, m in zip(states, trims, strict=True)
    ]


class StreamMetrics:
    """The shared streams' gauges, on a service's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.length = Gauge(
            "arena_stream_length", "entries in the shared stream", ["stream"], registry=r
        )
        self.pending = Gauge(
            "arena_stream_group_pending",
            "entries delivered to the group and not acked yet",
            ["stream", "group"],
            registry=r,
        )
        self.lag = Gauge(
            "arena_stream_group_lag",
            f"entries not yet delivered to the group (counted up to {LAG_CAP} on Redis < 7)",
            ["stream", "group"],
            registry=r,
        )
        self.oldest = Gauge(
            "arena_stream_group_oldest_unacked_seconds",
            "age of the oldest entry the group has not acked (0: none); the stream is not "
            "trimmed past it",
            ["stream", "group"],
            registry=r,
        )
        self.missing = Gauge(
            "arena_stream_group_missing",
            "1 while a group the stream is read by does not exist (the stream is not trimmed)",
            ["stream", "group"],
            registry=r,
        )
        self.trimmed = Counter(
            "arena_stream_trimmed", "entries trimmed from the shared stream", ["stream"], registry=r
        )

    def update(self, name: str, state: StreamState, removed: int) -> None:
        """Record one reading of stream `name`."""
        self.length.labels(name).set(state.length - removed)
        for g in state.groups:
            self.pending.labels(name, g.group).set(g.pending)
            self.lag.labels(name, g.group).set(g.lag)
            self.oldest.labels(name, g.group).set(state.age_s(g.oldest_unacked))
            self.missing.labels(name, g.group).set(0)
        for group in state.missing:
            self.missing.labels(name, group).set(1)
        self.trimmed.labels(name).inc(removed)


class StreamKeeper:
    """Trims the shared streams of `namespace` and reports their metrics, every `interval_s`."""

    def __init__(
        self,
        client: aioredis.Redis,
        namespace: str,
        registry: CollectorRegistry | None = None,
        *,
        interval_s: float = 1.0,
        streams: Iterable[SharedStream[Any]] = SHARED,
        retention_ms: Mapping[str, int] = RETENTION_MS,
        name: str = "arena",
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.interval_s = interval_s
        self.streams = tuple(streams)
        self.retention_ms = dict(retention_ms)
        self.metrics = StreamMetrics(registry or CollectorRegistry())
        self.name = name
        self._last_error = ""

    async def once(self) -> dict[str, tuple[StreamState, int]]:
        """One round over every stream, each partition trimmed on its own: {stream name: (the
        partitions' states before, merged; entries trimmed)}."""
        todo = [(s, key) for s in self.streams for key in stream_keys(self.namespace, s.name)]
        done = await trim_all(
            self.client,
            [(key, s.groups, self.retention_ms.get(s.name, 0)) for s, key in todo],
        )
        out: dict[str, tuple[StreamState, int]] = {}
        for s in self.streams:
            mine = [r for (stream, _), r in zip(todo, done, strict=True) if stream is s]
            merged = merge_states([state for state, _ in mine])
            removed = sum(gone for _, gone in mine)
            self.metrics.update(s.name, merged, removed)
            out[s.name] = (merged, removed)
        return out

    async def run(self, stop: asyncio.Event) -> None:
        """Keep the streams until `stop` is set; a failed round (Redis away) is reported once
        per distinct error and retried at the next interval."""
        while not stop.is_set():
            try:
                await self.once()
                self._last_error = ""
            except Exception as exc:  # noqa: BLE001 - Redis away, a cluster failing over, …
                # an outage in its words: a refused XTRIM names its MINID, new every round
                words = outage_words(exc) if is_outage(exc) else str(exc)
                text = f"{type(exc).__name__}: {words}"
                if text != self._last_error:
                    print(f"{self.name}: stream trimming failed: {text}", file=sys.stderr)
                    self._last_error = text
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.interval_s)
