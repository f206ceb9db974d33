"""Appends on Redis: the script that checks a log's version and appends, for several games at
once, and the batching that hands it the appends of one event-loop iteration.

Each call of the script (EVALSHA) costs Redis a fixed price beside its commands (the call,
its arguments copied into Lua, the reply): measured with the engine's appends (5 entries and
an outbox of 3 commands), one game per call cost Redis ~21 us against ~17 us for ten per call,
and the client packs and parses one command per call. So the appends that concurrent games
make in one loop iteration go in as few calls as the key layout allows: on one Redis, one call
for all of them; on a Redis Cluster, one per partition (a script touches one hash slot, and a
game's keys and its outbox's share its partition's tag; an append whose outbox names a key of
another slot gets a call of its own).

Inside a call every append is still checked and applied on its own, in order, exactly as it
was alone: its version check (below), its outbox's key types checked before it writes
anything, its outbox run only if it was accepted. One game's conflict or refusal never touches
another's. An error Redis raises mid-call (out of memory) fails the call: its appends' callers
all get the error, as they would a lost connection, whether or not theirs was written.

The version check: the stream's length (XLEN, O(1)) against the expected version. A log is
append-only and numbered 1..N, so its length is its last sequence number. The check stays exact
if that is broken (an operator's XDEL): a mismatch, or an empty batch, reads the last id
(XREVRANGE) and compares that; and the first XADD, the append's first write, refuses an id not
above the last one, which becomes a conflict. A script runs atomically on the server, so there
is no window between check and write (MULTI/EXEC with WATCH would turn every race into a
retry round trip, and a MULTI of XADDs checks nothing).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, NamedTuple

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import NoScriptError, ResponseError

from ..contracts.streams import Layout
from ..redisinfra.batching import AutoPipeline, TickBatcher
from ..redisinfra.redis_client import is_cluster
from .store import Snapshot, VersionConflict

LAST_SEQ_LUA = """
local function last_seq(key)
  local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
  if #last == 0 then return 0 end
  return tonumber(string.match(last[1][1], '^(%d+)-'))
end
"""

# KEYS: the logs, outbox and snapshot keys of the call. ARGV[1]: one msgpack array (`_PACK`):
# how many appends; then per append: its log's key index, expected version, n records, m (its
# outbox's items), its mark ('' for none: written as field `p` of its last entry), k (how many
# of its outbox's arguments are bytes), its snapshot hash's key index (0: no snapshot) and, if
# it has one, the snapshot's version; then the outbox as (name, key index, argc, args...). The
# bytes (Redis's msgpack reads no bin type) follow as ARGV[2...], in order: per append its
# mark (if not ''), its n records, its outbox's k bytes arguments, its snapshot's chain hash
# and state (if any); each stands in the array as false. The reply: per append two items, 1
# and the new version, 0 and the actual version (a conflict) or -1 and the reason (refused);
# nothing written unless 1.
#
# A snapshot is written only with its append accepted, as redis_store.SNAPSHOT_LUA writes one:
# never beyond the log's head (its version at most the append's new version) and never over a
# newer one; a snapshot not written so is no error (it only saves a reload work), the append's
# reply says nothing of it. It rides in its append's call instead of a script call of its own
# after it: each call costs the client a whole command's round of Python (the engine stored
# one every 200 entries a game: 4.4% of its main thread's samples).
#
# One array, not an argument per item: Redis makes an object of each argument of a command and
# a Lua string of each item of ARGV, and tonumber parses each number again (strtod). With ~18
# items an append, that was about half of what an append cost Redis: a script that read its
# ARGV and wrote nothing cost 13.5-14.4 us an append against 26-27 for the whole append (25
# appends a call, redis-server 6.2). From the array the numbers come as numbers (numbers the
# outbox passes on to Redis go as text: Redis formats a Lua number with %.17g, ~1,600
# instructions each), and each append's result is two items of one flat reply, not a table.
APPEND_LUA = (
    LAST_SEQ_LUA
    + """
local kinds = {XADD = 'stream', ZADD = 'zset', ZREM = 'zset', ZMOVE = 'zset'}
local types = {}  -- a key's type: as TYPE said, or as an accepted append's outbox made it
local t = nil
local out = {}
local A = cmsgpack.unpack(ARGV[1])
local i, b = 2, 1  -- A[i]: the next append's first item; ARGV[b]: the last bytes taken
for g = 1, A[1] do
  local key, expected = KEYS[A[i]], A[i + 1]
  local n, m, mark, k, snap = A[i + 2], A[i + 3], A[i + 4], A[i + 5], A[i + 6]
  if mark == false then
    b = b + 1
    mark = ARGV[b]
  end
  local first, blobs = b + 1, b + n  -- its records: ARGV[first..first + n - 1]
  b = blobs + k
  local cmds = i + 7
  local snapv = nil
  if snap ~= 0 then  -- (its chain hash and state: ARGV[b + 1], ARGV[b + 2])
    snapv = A[i + 7]
    cmds = i + 8
    b = b + 2
  end
  local stop = cmds + m
  i = stop
  local made, status, value = nil, nil, nil
  local j = cmds
  while j < stop do  -- refuse before writing anything: a script's writes are not undone
    local want, okey = kinds[A[j]], KEYS[A[j + 1]]
    local have = (made and made[okey]) or types[okey]
    if have == nil then
      have = redis.call('TYPE', okey)['ok']
      types[okey] = have
    end
    if have == 'none' then
      made = made or {}
      made[okey] = want  -- a later command of this outbox must agree
    elseif have ~= want then
      status, value = -1, 'outbox: ' .. okey .. ' holds a ' .. have .. ', not a ' .. want
      break
    end
    if A[j] == 'ZMOVE' and A[j + 2] ~= 3 then
      status, value = -1, 'outbox: ZMOVE takes 3 arguments, not ' .. A[j + 2]
      break
    end
    j = j + 3 + A[j + 2]
  end
  if status == nil and (n == 0 or redis.call('XLEN', key) ~= expected) then
    local actual = last_seq(key)
    if actual ~= expected then
      status, value = 0, actual
    elseif n == 0 then
      status, value = 1, expected
    end
  end
  if status == nil then
    if t == nil then  -- one append time for the call
      local now = redis.call('TIME')
      t = string.format('%.0f', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
    end
    -- the first XADD completes the check: its id must be above the last (a length that
    -- matches while the last id is higher, after an XDEL, fails here, before any write)
    local id = string.format('%d-0', expected + 1)
    local added
    if n == 1 and mark ~= '' then
      added = redis.pcall('XADD', key, id, 'e', ARGV[first], 't', t, 'p', mark)
    else
      added = redis.pcall('XADD', key, id, 'e', ARGV[first], 't', t)
    end
    if type(added) == 'table' and added.err then
      local actual = last_seq(key)
      if actual ~= expected then status, value = 0, actual else status, value = -1, added.err end
    else
      for r = 1, n - 1 do
        id = string.format('%d-0', expected + 1 + r)
        if r == n - 1 and mark ~= '' then
          redis.call('XADD', key, id, 'e', ARGV[first + r], 't', t, 'p', mark)
        else
          redis.call('XADD', key, id, 'e', ARGV[first + r], 't', t)
        end
      end
      status, value = 1, expected + n
    end
  end
  if status == 1 then
    j = cmds
    while j < stop do
      local name, argc = A[j], A[j + 2]
      if k == 0 then
        if name == 'ZMOVE' then  -- (the usual: a game's deadline moved on)
          local okey = KEYS[A[j + 1]]
          redis.call('ZREM', okey, A[j + 3])
          redis.call('ZADD', okey, A[j + 4], A[j + 5])
        else
          redis.call(name, KEYS[A[j + 1]], unpack(A, j + 3, j + 2 + argc))
        end
      else  -- (an outbox that publishes a message: its fields are bytes)
        local args = {}
        for x = 1, argc do
          local v = A[j + 2 + x]
          if v == false then
            blobs = blobs + 1
            v = ARGV[blobs]
          end
          args[x] = v
        end
        if name == 'ZMOVE' then
          redis.call('ZREM', KEYS[A[j + 1]], args[1])
          redis.call('ZADD', KEYS[A[j + 1]], args[2], args[3])
        else
          redis.call(name, KEYS[A[j + 1]], unpack(args))
        end
      end
      j = j + 3 + argc
    end
    if made then
      for k, v in pairs(made) do types[k] = v end
    end
    if snapv ~= nil and snapv <= value then  -- never beyond the head, never over a newer one
      local skey = KEYS[snap]
      local old = redis.call('HGET', skey, 'v')
      if not old or tonumber(old) < snapv then
        redis.call('HSET', skey, 'v', string.format('%d', snapv), 'h', ARGV[b - 1], 's', ARGV[b])
      end
    end
  end
  out[2 * g - 1], out[2 * g] = status, value
end
return out
"""
)

OUTBOX_COMMANDS = frozenset({"XADD", "ZADD", "ZREM", "ZMOVE"})
_PACK = msgspec.msgpack.Encoder().encode  # a call's items, as APPEND_LUA's ARGV[1]
MAX_PER_CALL = 64  # appends per script call


class OutboxCommand(NamedTuple):
    """A Redis command run in the append's script, only if the append is accepted: a message
    published or a deadline moved exactly when the entries it follows are in the log."""

    name: str  # one of OUTBOX_COMMANDS; ZMOVE (old, score, new): ZREM old, then ZADD score new
    key: str
    args: tuple[str | bytes | int, ...]


Command = tuple[str, str, tuple[str | bytes | int, ...]]
"""An outbox command as an append takes it: an `OutboxCommand`, or a plain tuple of the same
(name, key, args), which the engine makes for every answer (a NamedTuple costs ~5x a tuple to
make: ~0.3 us here, twice an answer)."""


class Append(NamedTuple):
    """One game's append: after `expected`, these records, then (if accepted) this outbox;
    `mark` (if any) goes beside its last record, as that entry's field `p` (what the engine
    says is pending after it: services/readside/decisions.py `Mark`; not a record: not in the
    hash chain nor the archive, and every reader of records passes it by). `snapshot`: the
    game's state to store in `snap_key` if the append is accepted, in the same script (never
    beyond the head it leaves, never over a newer snapshot)."""

    game: str
    key: str  # the log's key
    expected: int
    records: Sequence[bytes]
    outbox: Sequence[Command]
    mark: bytes = b""
    snapshot: Snapshot | None = None  # stored with the append, if accepted (APPEND_LUA)
    snap_key: str = ""  # the snapshot hash's key (with `snapshot`)


class Appender:
    """Runs appends in as few script calls as the layout allows (see the module docstring);
    the calls of one flush share one pipeline round trip (`AutoPipeline`)."""

    def __init__(self, client: aioredis.Redis, auto: AutoPipeline, layout: Layout) -> None:
        self.client, self.auto, self.layout = client, auto, layout
        self.per_call = MAX_PER_CALL  # (1: every append a call of its own; for benchmarks)
        self.script = client.register_script(APPEND_LUA)
        self.batcher: TickBatcher[Append, int] = TickBatcher(self._flush)
        self.calls = 0  # script calls made (for benchmarks)
        self._loading: asyncio.Future[Any] | None = None

    async def append(self, item: Append) -> int:
        """The new version; VersionConflict, or the error Redis gave for this append."""
        for cmd in item.outbox:
            if cmd[0] not in OUTBOX_COMMANDS:
                raise ValueError(f"{cmd[0]!r} is not an outbox command")
        return await self.batcher.submit(item)

    async def append_many(self, items: Sequence[Append]) -> list[int | BaseException]:
        """`append` for each of `items` (one game each), batched as concurrent appends are:
        each one's new version or its error, never raised (one future for all, not one each)."""
        for item in items:
            for cmd in item.outbox:
                if cmd[0] not in OUTBOX_COMMANDS:
                    raise ValueError(f"{cmd[0]!r} is not an outbox command")
        return await self.batcher.submit_many(items)

    def _groups(self, items: list[Append]) -> list[list[int]]:
        """Which appends may share a call: all on one Redis; on a cluster, those of one
        partition whose outbox and snapshot keys all carry its tag."""
        n = self.per_call
        if not is_cluster(self.client):  # one Redis: every append may share a call
            return [list(range(k, min(k + n, len(items)))) for k in range(0, len(items), n)]
        groups: dict[str, list[int]] = {}
        for i, a in enumerate(items):
            tag = "{" + self.layout.tag(a.game) + "}"
            alone = not all(tag in c[1] for c in a.outbox) or (
                a.snapshot is not None and tag not in a.snap_key
            )
            group = f"alone {i}" if alone else tag
            groups.setdefault(group, []).append(i)
        return [g[k : k + n] for g in groups.values() for k in range(0, len(g), n)]

    async def _flush(self, items: list[Append]) -> list[int | BaseException]:
        groups = self._groups(items)
        replies = await asyncio.gather(
            *(self._call([items[i] for i in g]) for g in groups), return_exceptions=True
        )
        out: list[int | BaseException] = [0] * len(items)
        for group, reply in zip(groups, replies, strict=True):
            for k, i in enumerate(group):
                out[i] = (
                    reply
                    if isinstance(reply, BaseException)
                    else _result(items[i], reply[2 * k], reply[2 * k + 1])
                )
        return out

    async def _call(self, batch: list[Append]) -> list[Any]:
        # (one pass, the items appended in place: per append ~18 items, and building them in
        # small lists joined later cost the engine ~1.4 us an append; a key's index looked up
        # before it is set, an argument's type by `type(v) is str` before isinstance)
        keys: dict[str, int] = {}
        args: list[str | int | bool] = [len(batch)]
        blobs: list[bytes] = []
        put, blob, blobs_from = args.append, blobs.append, blobs.extend
        for a in batch:
            log = keys.get(a.key)
            if log is None:
                log = keys[a.key] = len(keys) + 1
            mark, records, outbox, snap = a.mark, a.records, a.outbox, a.snapshot
            if mark:
                blob(mark)
            blobs_from(records)
            cmds: list[str | int | bool] = []
            n_bytes = 0
            for name, okey, cargs in outbox:
                k = keys.get(okey)
                if k is None:
                    k = keys[okey] = len(keys) + 1
                cmds += (name, k, len(cargs))
                for v in cargs:
                    if type(v) is str:
                        cmds.append(v)
                    elif isinstance(v, bytes):  # (after the records, in order: ARGV)
                        blob(v)
                        n_bytes += 1
                        cmds.append(False)
                    else:  # (a number as text: Redis would format a Lua number with %.17g)
                        cmds.append(v if isinstance(v, str) else str(v))
            put(log)
            put(a.expected)
            put(len(records))
            put(len(cmds))
            put(False if mark else "")
            put(n_bytes)
            if snap is None:
                put(0)
            else:
                k = keys.get(a.snap_key)
                if k is None:
                    k = keys[a.snap_key] = len(keys) + 1
                put(k)
                put(snap.version)
                blob(snap.chain_hash)
                blob(snap.state)
            args += cmds
        names = list(keys)
        packed = [_PACK(args), *blobs]
        self.calls += 1
        try:
            reply: Any = await self._evalsha(names, packed)
        except NoScriptError:  # a restarted or new server (a promoted replica): load, again
            await self._load()
            reply = await self._evalsha(names, packed)
        return list(reply)

    def _evalsha(self, keys: list[str], packed: list[bytes]) -> Any:
        sha = self.script.sha
        # execute_command: a cluster pipeline refuses its evalsha method, not EVALSHA
        return self.auto.run(lambda p: p.execute_command("EVALSHA", sha, len(keys), *keys, *packed))

    async def _load(self) -> None:
        """SCRIPT LOAD once for every call that met NOSCRIPT at the same time."""
        if self._loading is None:
            self._loading = asyncio.ensure_future(self.client.script_load(APPEND_LUA))
            self._loading.add_done_callback(lambda _: setattr(self, "_loading", None))
        await asyncio.shield(self._loading)


def _result(a: Append, status: Any, value: Any) -> int | BaseException:
    status = int(status)
    if status == 1:
        return int(value)
    if status == 0:
        return VersionConflict(a.game, a.expected, int(value))
    text = value.decode() if isinstance(value, bytes) else str(value)
    return ResponseError(text)
