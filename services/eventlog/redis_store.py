"""Redis EventStore: one stream per game, appended by a server-side script.

Keys (named by services/contracts/streams.py `game_key`, `Layout`: TAG is the hash tag of the game's
partition, so a game's keys and its partition's streams share one Redis Cluster slot and the
scripts may touch them all):

    {ns}:{TAG}:g:GAME:log   stream; entry id SEQ-0, field `e` holding the record bytes, then
                            `t`, the append time (ms, the server's TIME; absent on old entries)
    {ns}:{TAG}:g:GAME:snap  hash; v (version), h (chain hash), s (state bytes)

Appends run a script that checks the log's version and appends, for all the appends concurrent
games make in one event-loop iteration at once (on a Redis Cluster, one call per partition);
each is still checked and applied on its own, so one game's conflict never fails another's
append (appends.py: the script, its version check, the batching).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis

from ..contracts.streams import Layout
from ..redisinfra.batching import AutoPipeline
from ..redisinfra.redis_client import connect, decodes_responses, is_cluster
from .appends import LAST_SEQ_LUA, OUTBOX_COMMANDS, Append, Appender, Command, OutboxCommand
from .store import Record, Snapshot, TimedRecord, check_game_id

SNAPSHOT_LUA = (
    LAST_SEQ_LUA
    + """
local v = tonumber(ARGV[1])
if v > last_seq(KEYS[2]) then return -1 end
local old = redis.call('HGET', KEYS[1], 'v')
if old and tonumber(old) >= v then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'h', ARGV[2], 's', ARGV[3])
return 1
"""
)


# redis-py turns every XRANGE entry into an id and a field dict (~25 us an entry without hiredis,
# ~2.5 us with it), which dominated loading and archiving a game. This script frames the entries
# as one bulk string instead (per entry: u32be sequence number, u32be length, bytes): measured
# 0.88 ms against 2.2 ms for XRANGE over 900 entries with hiredis, ~5x faster without it.
# With ARGV[3] == '1' each frame also carries the append time (i64be, -1 when the entry has none)
# between the length and the bytes. `e` is always an entry's first field and `t` its second
# (an append's last entry may have a third, `p`: its mark, passed by here).
# ARGV[4]: at most this many entries (a page: `PAGE`). -1: no such log (deleted, or never made).
PAGE = 1000
"""Entries per read: a log is read in pages, so no single command holds Redis for long. A
whole-log read of a runaway game (500,000 entries) once took over 5 s of Redis's one thread,
and every other client got BUSY meanwhile; a page of 1,000 entries costs ~1 ms."""
MAX_MARKS = 8192  # games whose newest mark a store keeps (`mark_of`)
READ_LUA = """
local rows = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[2], 'COUNT', tonumber(ARGV[4]))
local timed = ARGV[3] == '1'
local parts = {}
for i, row in ipairs(rows) do
  local f = row[2]
  local value = f[2]
  local seq = tonumber(string.match(row[1], '^(%d+)-'))
  if timed then
    local t = -1
    if f[3] == 't' then t = tonumber(f[4]) end
    parts[2 * i - 1] = struct.pack('>I4I4i8', seq, #value, t)
  else
    parts[2 * i - 1] = struct.pack('>I4I4', seq, #value)
  end
  parts[2 * i] = value
end
if #rows == 0 and redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return table.concat(parts)
"""
_FRAME = struct.Struct(">II")
_FRAME_T = struct.Struct(">IIq")


def _unframe(blob: bytes) -> list[Record]:
    out: list[Record] = []
    pos, end, unpack = 0, len(blob), _FRAME.unpack_from
    while pos < end:
        seq, size = unpack(blob, pos)
        pos += 8
        out.append((seq, blob[pos : pos + size]))
        pos += size
    return out


def _unframe_timed(blob: bytes) -> list[TimedRecord]:
    out: list[TimedRecord] = []
    pos, end, unpack = 0, len(blob), _FRAME_T.unpack_from
    while pos < end:
        seq, size, t = unpack(blob, pos)
        pos += 16
        out.append((seq, blob[pos : pos + size], t if t >= 0 else None))
        pos += size
    return out


def _timed_rows(rows: Any) -> list[TimedRecord]:
    out: list[TimedRecord] = []
    for sid, fields in rows:
        t = fields.get(b"t")
        out.append((_seq(sid), fields[b"e"], int(t) if t is not None else None))
    return out


def _field(fields: list[bytes], name: bytes) -> bytes:
    """Field `name` of an entry's flat [name, value, ...] list."""
    return dict(zip(fields[::2], fields[1::2], strict=True))[name]


def _seq(stream_id: bytes | str) -> int:
    raw = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    return int(raw.split("-", 1)[0])


class RedisEventStore:
    """EventStore on Redis streams (redis-py asyncio; the client must not decode responses)."""

    def __init__(
        self,
        client: aioredis.Redis,
        namespace: str = "arena",
        framed_reads: bool | None = None,
        *,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
        wait_aof: bool = False,
    ) -> None:
        if decodes_responses(client):
            raise ValueError("RedisEventStore needs a client with decode_responses=False")
        self.client = client
        self.namespace = namespace
        self.layout = Layout(namespace)  # (the keys of every answer: the partition count once)
        self._snapshot = client.register_script(SNAPSHOT_LUA)
        self._read = client.register_script(READ_LUA)
        # appends of concurrent games share a round trip; with `wait_replicas` the round trip
        # ends with WAIT on each server: an append is acknowledged only once that many replicas
        # have it (else NotReplicated: written, but a failover now could lose it)
        # with `wait_aof` (Redis 7.2+) the round trip ends with WAITAOF instead: acknowledged
        # once the server's AOF has the append fsynced (docs/durability.md)
        self.auto = AutoPipeline(client, wait=(wait_replicas, wait_timeout_ms), wait_aof=wait_aof)
        self.appender = Appender(client, self.auto, self.layout)
        self.marks: dict[str, tuple[int, bytes]] = {}  # game -> its newest mark read (mark_of)
        self.framed_reads = True if framed_reads is None else framed_reads
        # whole-log reads by plain XRANGE, replies as hiredis parses them (`_raw_page`); on a
        # cluster the script (the cluster client routes by its own command table)
        self._raw_reads = not is_cluster(client)
        self._log_keys: dict[str, str] = {}  # game -> its log's key (named at every append)

    @classmethod
    def from_url(cls, url: str, namespace: str = "arena") -> RedisEventStore:
        """A store with its own client for `url`."""
        return cls(connect(url), namespace)

    def log_key(self, game: str) -> str:
        """The stream key of `game`."""
        key = self._log_keys.get(game)
        if key is None:
            if len(self._log_keys) >= Layout.MAX_GAMES:
                self._log_keys.clear()
            key = self._log_keys[game] = self.layout.game_key(check_game_id(game), "log")
        return key

    def snapshot_key(self, game: str) -> str:
        """The snapshot hash key of `game`."""
        return self.layout.game_key(check_game_id(game), "snap")

    async def append(
        self,
        game: str,
        expected_version: int,
        records: Sequence[bytes],
        outbox: Sequence[OutboxCommand] = (),
        mark: bytes = b"",
    ) -> int:
        """See EventStore.append; `outbox` commands run in the same script, after the entries,
        only if the append is accepted (on a Redis Cluster their keys should share the game's
        partition's tag, or the append gets a script call of its own); `mark` goes beside the
        last record (appends.py `Append`; read back by `mark_of`)."""
        return await self.appender.append(
            Append(game, self.log_key(game), expected_version, records, outbox, mark)
        )

    async def append_many(
        self,
        appends: Sequence[tuple[str, int, Sequence[bytes], Sequence[Command]]],
        marks: Sequence[bytes] | None = None,
        snapshots: Sequence[Snapshot | None] | None = None,
    ) -> list[int | BaseException]:
        """`append` for several games at once (game, expected version, records, outbox; and
        each one's mark, if `marks`), in the same script calls as the appends of this loop
        iteration: each one's new version or its error (VersionConflict, Redis's refusal),
        never raised. `snapshots` (if given, one or None per append): each stored in the
        append's script if the append is accepted, as `save_snapshot` would store it then
        (never beyond the log's head nor over a newer one; one not stored is not an error)."""
        out: list[Append] = []
        for k, (g, expected, records, outbox) in enumerate(appends):
            snap = snapshots[k] if snapshots else None
            out.append(
                Append(
                    g,
                    self.log_key(g),
                    expected,
                    records,
                    outbox,
                    marks[k] if marks else b"",
                    snap,
                    "" if snap is None else self.snapshot_key(g),
                )
            )
        return await self.appender.append_many(out)

    def mark_of(self, game: str) -> tuple[int, bytes] | None:
        """The newest mark (the seq of the entry it stands beside, and the mark) this store
        has read of `game` live (`tail_timed`, `tail_many`: a reader following the game), if
        any: what the engine said is pending after that entry (services/readside/seats.py)."""
        return self.marks.get(game)

    def _timed(self, game: str, rows: Any) -> list[TimedRecord]:
        """`_timed_rows`, keeping the newest mark among them (`mark_of`)."""
        for sid, fields in reversed(rows):
            mark = fields.get(b"p")
            if mark is not None:
                if len(self.marks) >= MAX_MARKS and game not in self.marks:
                    self.marks.clear()  # (the games followed now mark again at their next move)
                self.marks[game] = (_seq(sid), mark)
                break
        return _timed_rows(rows)

    async def read(self, game: str, after: int = 0, upto: int | None = None) -> list[Record]:
        """See EventStore.read (in pages of `PAGE` entries)."""
        if self.framed_reads:  # (the pages as they come, without a time to drop per entry)
            return await self._framed(game, after, upto)
        return [(seq, data) for seq, data, _ in await self._paged(game, after, upto, False)]

    async def _framed(self, game: str, after: int, upto: int | None) -> list[Record]:
        """`read` by the framed script: as `_paged` reads, for a caller that wants no times
        (the engine reads each finished game back to archive it, ~3.5 entries a decision)."""
        out: list[Record] = []
        key = self.log_key(game)
        whole = after == 0 and self._raw_reads  # (a log from its start: no script, below)
        while upto is None or upto > after:
            end = "+" if upto is None else f"{upto}-0"
            if whole:
                page = await self._raw_page(key, after, end)
                if page is None:  # no such log (any more)
                    return []
                out += page
                if len(page) < PAGE:
                    break
                after = page[-1][0]
                continue
            blob = await self._read(keys=[key], args=[f"{after + 1}-0", end, 0, PAGE])
            if isinstance(blob, int):  # -1: no such log (any more)
                return []
            page = _unframe(bytes(blob))
            out += page
            if len(page) < PAGE:
                break
            after = page[-1][0]
        return out

    async def _raw_page(self, key: str, after: int, end: str) -> list[Record] | None:
        """A page of a log read from its start (`_framed`) by plain XRANGE: the script frames
        its entries cheaply for the client, but Redis turns each into two Lua tables and five
        strings first, then a match, a pack and a concat: 3.2-4.0 us of Redis an entry against
        0.55-0.72 for XRANGE (20 logs of 1,250 entries read whole, twice; the client 1.1-1.6
        us an entry either way), and the engine reads every finished game back so (~4.5
        entries a decision). The command goes by its name as bytes, so redis-py gives hiredis's
        reply as it is, not a dict per entry (a callback it would look up by the name as text).
        None: no such log. A log that exists has its header, so an empty first page is none;
        an empty later page is the end unless the log went meanwhile (archived and deleted)."""
        client: Any = self.client  # (redis-py's asyncio execute_command is not typed)
        rows: Any = await client.execute_command(
            b"XRANGE", key, f"{after + 1}-0", end, b"COUNT", PAGE
        )
        if not rows:
            return None if after == 0 or not await self.client.exists(key) else []
        if isinstance(rows[0], tuple):  # (a redis-py that ran its callback after all)
            return [(_seq(sid), fields[b"e"]) for sid, fields in rows]
        return [
            (int(sid[: sid.index(b"-")]), f[1] if f[0] == b"e" else _field(f, b"e"))
            for sid, f in rows
        ]

    async def read_timed(
        self, game: str, after: int = 0, upto: int | None = None
    ) -> list[TimedRecord]:
        """See EventStore.read_timed (in pages of `PAGE` entries)."""
        return await self._paged(game, after, upto, True)

    async def _paged(
        self, game: str, after: int, upto: int | None, timed: bool
    ) -> list[TimedRecord]:
        """Records after `after` up to `upto`, a page per command. A log deleted between two
        pages (archived meanwhile) reads as no log at all: the caller then finds the archive,
        as it would have a moment later; a read cut short there once looked like an unfinished
        game (the ratings consumer left such a game unrated until its message was claimed)."""
        out: list[TimedRecord] = []
        key = self.log_key(game)
        while upto is None or upto > after:
            end = "+" if upto is None else f"{upto}-0"
            start = f"{after + 1}-0"
            if self.framed_reads:
                blob = await self._read(keys=[key], args=[start, end, int(timed), PAGE])
                if isinstance(blob, int):  # -1: no such log (any more)
                    return []
                page = (
                    _unframe_timed(bytes(blob))
                    if timed
                    else [(q, d, None) for q, d in _unframe(bytes(blob))]
                )
            else:
                page = _timed_rows(await self.client.xrange(key, start, end, count=PAGE))
                if not page and out and not await self.client.exists(key):
                    return []
            out += page
            if len(page) < PAGE:
                break
            after = page[-1][0]
        return out

    async def _xread(self, game: str, after: int, block_ms: int) -> Any:
        key = self.log_key(game)
        reply: Any = await self.client.xread({key: f"{after}-0"}, count=PAGE, block=block_ms)
        if not reply:
            return []
        # RESP2 gives [[key, rows]], RESP3 a {key: [rows]} map; accept both.
        return next(iter(reply.values()))[0] if isinstance(reply, dict) else reply[0][1]

    async def tail(self, game: str, after: int, block_ms: int) -> list[Record]:
        """See EventStore.tail."""
        if block_ms <= 0:
            return await self.read(game, after)
        return [
            (_seq(sid), fields[b"e"]) for sid, fields in await self._xread(game, after, block_ms)
        ]

    async def tail_timed(self, game: str, after: int, block_ms: int) -> list[TimedRecord]:
        """See EventStore.tail_timed."""
        if block_ms <= 0:
            return await self.read_timed(game, after)
        return self._timed(game, await self._xread(game, after, block_ms))

    @property
    def tails_together(self) -> bool:
        """Whether `tail_many` may name several games in one XREAD: on one Redis, not on a
        Redis Cluster (the games' logs lie in other slots)."""
        return not is_cluster(self.client)

    async def tail_many(
        self, afters: dict[str, int], block_ms: int
    ) -> dict[str, list[TimedRecord]]:
        """`tail_timed` of several games in one XREAD (`tails_together` only): the entries after
        each game's seq, for the games that have any, waiting up to ``block_ms`` (> 0) for one
        (services/readside/tail.py: every feed of a process waits in one call)."""
        keys = {self.log_key(game): game for game in afters}
        streams = {key: f"{afters[game]}-0" for key, game in keys.items()}
        reply: Any = await self.client.xread(streams, count=PAGE, block=max(1, block_ms))  # type: ignore[arg-type]
        if not reply:
            return {}
        # RESP2 gives [[key, rows], ...], RESP3 a {key: [rows]} map; accept both
        pairs = [(k, v[0]) for k, v in reply.items()] if isinstance(reply, dict) else reply
        out: dict[str, list[TimedRecord]] = {}
        for key, rows in pairs:
            name = key.decode() if isinstance(key, bytes) else str(key)
            if name in keys and rows:
                out[keys[name]] = self._timed(keys[name], rows)
        return out

    async def head(self, game: str) -> int:
        """See EventStore.head."""
        rows: Any = await self.client.xrevrange(self.log_key(game), "+", "-", count=1)
        return _seq(rows[0][0]) if rows else 0

    async def save_snapshot(self, game: str, snapshot: Snapshot) -> bool:
        """See EventStore.save_snapshot."""
        keys = [self.snapshot_key(game), self.log_key(game)]
        args: list[int | bytes] = [snapshot.version, snapshot.chain_hash, snapshot.state]
        reply: Any = await self._snapshot(keys=keys, args=args)
        if int(reply) < 0:
            raise ValueError(f"snapshot at {snapshot.version} is beyond the head of {game!r}")
        return int(reply) == 1

    async def load_snapshot(self, game: str) -> Snapshot | None:
        """See EventStore.load_snapshot."""
        fields: Any = await self.client.hgetall(self.snapshot_key(game))
        if not fields:
            return None
        return Snapshot(int(fields[b"v"]), bytes(fields[b"h"]), bytes(fields[b"s"]))

    async def delete(self, game: str) -> None:
        """See EventStore.delete."""
        await self.client.delete(self.log_key(game), self.snapshot_key(game))

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self.client.aclose()


__all__ = ["OUTBOX_COMMANDS", "OutboxCommand", "RedisEventStore"]
