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
import dataclasses
import functools
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from prometheus_client import CollectorRegistry, Counter, Gauge

from ..contracts.streams import FINISHED, SHARED, SharedStream, stream_keys
from .reconnect import is_outage, outage_words
from .redis_client import is_cluster

RETENTION_MS: Mapping[str, int] = {FINISHED.name: 600_000}
"""Per shared stream, how long entries stay whatever the groups acked (readers without a group)."""

LAG_CAP = 10_000
"""On Redis < 7 the lag is counted with XRANGE, up to this many entries."""

_STATE_LUA = """
local cap = tonumber(ARGV[1])
local now = redis.call('TIME')
local out = {now[1], now[2]}
for _, key in ipairs(KEYS) do
  local row = {redis.call('XLEN', key)}
  if row[1] > 0 or redis.call('EXISTS', key) == 1 then
    for _, info in ipairs(redis.call('XINFO', 'GROUPS', key)) do
      local f = {}
      for j = 1, #info, 2 do f[info[j]] = info[j + 1] end
      local name, last, lag = f['name'], f['last-delivered-id'], f['lag']
      local summary = redis.call('XPENDING', key, name)
      if type(lag) ~= 'number' then lag = -1 end
      local rows = redis.call('XRANGE', key, '(' .. last, '+', 'COUNT', lag < 0 and cap or 1)
      local first = ''
      if #rows > 0 then first = rows[1][1] end
      row[#row + 1] = name
      row[#row + 1] = table.concat(
        {f['consumers'], summary[1], last, lag, summary[2] or '', #rows, first}, ',')
    end
  end
  out[#out + 1] = row
end
return out
"""
"""One reading of streams KEYS in one call: Redis's clock (TIME's two numbers), then per stream
{its length, then per group its name and one string of its numbers and ids, comma-separated:
consumers, pending, last-delivered id, lag or -1 where Redis does not know it (6.2), oldest
pending id or '', entries after the last-delivered id counted up to ARGV[1] (1 where the lag
is known), the first of them or ''}. Few and small replies: the client parses ~4 items a
stream, not a dict per XINFO reply (a round of 48 streams cost the keeper as much as ~0.5 ms
of parsing), and an unchanged group's two items give the state made last time."""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@functools.lru_cache(maxsize=8192)  # (a keeper's rounds see the same ids again and again)
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
    """`read_state` for many (key, expected groups) at once: one script call (`_STATE_LUA`)
    for all of them, or on a Redis Cluster one per stream, pipelined (a script touches one
    slot). It replaced TIME, then each stream's XLEN and XINFO GROUPS, then each group's
    XPENDING and lag count: three round trips and ~145 commands whose replies the client
    parsed into dicts every round (5.3 ms of a keeper's CPU a round over 16 partitions, idle)."""
    keys = [key for key, _ in streams]
    if not keys:
        return []
    if is_cluster(client):
        async with client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.execute_command("EVAL", _STATE_LUA, 1, key, LAG_CAP)
            replies: list[Any] = await pipe.execute(raise_on_error=False)
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        now_ms = max(_ms(reply) for reply in replies)
        rows = [reply[2] for reply in replies]
    else:
        one: Any = await client.eval(_STATE_LUA, len(keys), *keys, LAG_CAP)
        now_ms, rows = _ms(one), list(one[2:])
    out: list[StreamState] = []
    for (key, expected), row in zip(streams, rows, strict=True):
        groups = tuple(_group_state(row[i], row[i + 1]) for i in range(1, len(row), 2))
        names = {g.group for g in groups}
        missing = tuple(g for g in expected if g not in names)
        out.append(StreamState(key, int(row[0]), groups, missing, now_ms))
    return out


def _ms(reply: Sequence[Any]) -> int:
    """Redis's clock (ms) from a `_STATE_LUA` reply's first two items (TIME's)."""
    return int(reply[0]) * 1000 + int(reply[1]) // 1000


@functools.lru_cache(maxsize=4096)
def _group_state(name: str | bytes, fields: str | bytes) -> GroupState:
    """A group's state from its two items of a `_STATE_LUA` reply; the same items (a group
    nothing happened to since the last round, as on an idle platform) give the state made
    before."""
    consumers, pending_n, last, lag_n, oldest_pending, counted, first = _text(fields).split(",")
    pending = int(pending_n)
    oldest = [i for i in (oldest_pending if pending else "", first) if i]
    lag = int(lag_n) if int(lag_n) >= 0 else int(counted)  # Redis 7 knows it exactly
    needs = oldest_pending if pending and oldest_pending else _next_id(last)
    return GroupState(
        _text(name),
        int(consumers),
        pending,
        lag,
        last,
        needs,
        min(oldest, key=_parse_id) if oldest else None,
    )


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
    trimmed: dict[str, str] | None = None,
) -> list[tuple[StreamState, int]]:
    """`trim_acked` for many (key, expected groups, retention ms) at once: two round trips
    however many streams (a keeper's round over 16 partitions' streams was ~350 round trips,
    one per command), one when there is nothing to trim. `trimmed` (key -> the MINID it was
    last trimmed below, kept by the caller between rounds) skips a stream whose MINID has not
    moved: trimming below it again removes nothing (the stream grows only above it), and an
    idle platform's round is then its reading alone."""
    states = await read_states(client, [(key, groups) for key, groups, _ in streams])
    trims = []
    for state, (_, _, retention_ms) in zip(states, streams, strict=True):
        minid = state.safe_minid(retention_ms)
        moved = minid is not None and (trimmed is None or trimmed.get(state.key) != minid)
        trims.append(minid if moved and state.length else None)
    removed: list[Any] = []
    if any(m is not None for m in trims):
        async with client.pipeline(transaction=False) as pipe:
            for state, minid in zip(states, trims, strict=True):
                if minid is not None:
                    pipe.xtrim(state.key, minid=minid, approximate=approximate)
            removed = await pipe.execute()
        if trimmed is not None:
            for state, minid in zip(states, trims, strict=True):
                if minid is not None:
                    trimmed[state.key] = minid
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


IDLE_MAX_S = 5.0
"""The longest a `StreamKeeper` waits between rounds while nothing happens to the streams."""


class StreamKeeper:
    """Trims the shared streams of `namespace` and reports their metrics, every `interval_s`;
    while rounds find nothing changed (an idle platform), the wait doubles up to `idle_max_s`,
    and it is `interval_s` again from the first round that finds a change."""

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
        idle_max_s: float = IDLE_MAX_S,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.interval_s = interval_s
        self.idle_max_s = max(interval_s, idle_max_s)
        self.changed = True  # whether the last round found any stream changed (or trimmed)
        self.wait_s = interval_s  # the wait after the last round (`run`)
        self.streams = tuple(streams)
        self.retention_ms = dict(retention_ms)
        self.metrics = StreamMetrics(registry or CollectorRegistry())
        self.name = name
        self._last_error = ""
        self._trimmed: dict[str, str] = {}  # key -> the MINID it was last trimmed below
        # the partitions' keys, named once (P is fixed for a process's life: streams.partitions)
        self._todo = [(s, key) for s in self.streams for key in stream_keys(namespace, s.name)]
        # per stream: its partitions' states at the last round (clock aside) and their merge
        self._merged: dict[str, tuple[list[Any], StreamState]] = {}

    async def once(self) -> dict[str, tuple[StreamState, int]]:
        """One round over every stream, each partition trimmed on its own: {stream name: (the
        partitions' states before, merged; entries trimmed)}."""
        todo = self._todo
        done = await trim_all(
            self.client,
            [(key, s.groups, self.retention_ms.get(s.name, 0)) for s, key in todo],
            trimmed=self._trimmed,
        )
        out: dict[str, tuple[StreamState, int]] = {}
        changed = False
        for s in self.streams:
            mine = [r for (stream, _), r in zip(todo, done, strict=True) if stream is s]
            states = [state for state, _ in mine]
            seen = [(st.length, st.groups, st.missing) for st in states]
            last = self._merged.get(s.name)
            if last is not None and last[0] == seen:  # nothing happened to it: merged before
                merged = dataclasses.replace(last[1], now_ms=max(st.now_ms for st in states))
            else:
                merged = merge_states(states)
                self._merged[s.name] = (seen, merged)
                changed = True
            removed = sum(gone for _, gone in mine)
            changed = changed or removed > 0
            self.metrics.update(s.name, merged, removed)
            out[s.name] = (merged, removed)
        self.changed = changed
        return out

    async def run(self, stop: asyncio.Event) -> None:
        """Keep the streams until `stop` is set; a failed round (Redis away) is reported once
        per distinct error and retried at the next interval.

        A round that finds every stream as the last one did (lengths, every group's counts and
        ids; nothing trimmed) doubles the wait, up to `idle_max_s`: an idle platform's two
        keepers read 48 streams once a second each, ~0.5 ms of a keeper's CPU and ~0.7 ms of
        Redis's a round, for nothing (issue 44). Work shows in the next round (an entry added
        changes its stream's length), which is `interval_s` after it again; meanwhile nothing
        needs trimming, and a gauge is at most `idle_max_s` old (an oldest-unacked age grows
        while its group stands still: it is read at least that often)."""
        self.wait_s = self.interval_s
        while not stop.is_set():
            try:
                await self.once()
                self._last_error = ""
                self.wait_s = (
                    self.interval_s if self.changed else min(2 * self.wait_s, self.idle_max_s)
                )
            except Exception as exc:  # noqa: BLE001 - Redis away, a cluster failing over, …
                # an outage in its words: a refused XTRIM names its MINID, new every round
                words = outage_words(exc) if is_outage(exc) else str(exc)
                text = f"{type(exc).__name__}: {words}"
                if text != self._last_error:
                    print(f"{self.name}: stream trimming failed: {text}", file=sys.stderr)
                    self._last_error = text
                self.wait_s = self.interval_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.wait_s)
