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

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError, ResponseError

from ..contracts.streams import Layout
from ..redisinfra.batching import AutoPipeline, TickBatcher
from ..redisinfra.redis_client import is_cluster
from .store import VersionConflict

LAST_SEQ_LUA = """
local function last_seq(key)
  local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
  if #last == 0 then return 0 end
  return tonumber(string.match(last[1][1], '^(%d+)-'))
end
"""

# KEYS: the logs and outbox keys of the call. ARGV[1]: how many appends; then per append: its
# log's key index, expected version, n records, m (its outbox's ARGV items), its mark ('' for
# none: written as field `p` of its last entry), the records, then the outbox as (name, key
# index, argc, args...). Per append the reply is {1, new version},
# {0, actual version} (a conflict) or {-1, reason} (refused); nothing written unless 1.
APPEND_LUA = (
    LAST_SEQ_LUA
    + """
local kinds = {XADD = 'stream', ZADD = 'zset', ZREM = 'zset'}
local types = {}  -- a key's type: as TYPE said, or as an accepted append's outbox made it
local t = nil
local out = {}
local i = 2
for g = 1, tonumber(ARGV[1]) do
  local key, expected = KEYS[tonumber(ARGV[i])], tonumber(ARGV[i + 1])
  local n, m = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  local mark = ARGV[i + 4]
  local first, cmds = i + 5, i + 5 + n
  local stop = cmds + m
  i = stop
  local made, result = {}, nil
  local j = cmds
  while j < stop do  -- refuse before writing anything: a script's writes are not undone
    local want, okey = kinds[ARGV[j]], KEYS[tonumber(ARGV[j + 1])]
    local have = made[okey] or types[okey]
    if have == nil then
      have = redis.call('TYPE', okey)['ok']
      types[okey] = have
    end
    if have == 'none' then
      made[okey] = want  -- a later command of this outbox must agree
    elseif have ~= want then
      result = {-1, 'outbox: ' .. okey .. ' holds a ' .. have .. ', not a ' .. want}
      break
    end
    j = j + 3 + tonumber(ARGV[j + 2])
  end
  if result == nil and (n == 0 or redis.call('XLEN', key) ~= expected) then
    local actual = last_seq(key)
    if actual ~= expected then
      result = {0, actual}
    elseif n == 0 then
      result = {1, expected}
    end
  end
  if result == nil then
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
      if actual ~= expected then result = {0, actual} else result = {-1, added.err} end
    else
      for r = 1, n - 1 do
        id = string.format('%d-0', expected + 1 + r)
        if r == n - 1 and mark ~= '' then
          redis.call('XADD', key, id, 'e', ARGV[first + r], 't', t, 'p', mark)
        else
          redis.call('XADD', key, id, 'e', ARGV[first + r], 't', t)
        end
      end
      result = {1, expected + n}
    end
  end
  if result[1] == 1 then
    j = cmds
    while j < stop do
      local argc = tonumber(ARGV[j + 2])
      redis.call(ARGV[j], KEYS[tonumber(ARGV[j + 1])], unpack(ARGV, j + 3, j + 2 + argc))
      j = j + 3 + argc
    end
    for k, v in pairs(made) do types[k] = v end
  end
  out[g] = result
end
return out
"""
)

OUTBOX_COMMANDS = frozenset({"XADD", "ZADD", "ZREM"})
MAX_PER_CALL = 64  # appends per script call


class OutboxCommand(NamedTuple):
    """A Redis command run in the append's script, only if the append is accepted: a message
    published or a deadline moved exactly when the entries it follows are in the log."""

    name: str  # one of OUTBOX_COMMANDS
    key: str
    args: tuple[str | bytes | int, ...]


class Append(NamedTuple):
    """One game's append: after `expected`, these records, then (if accepted) this outbox;
    `mark` (if any) goes beside its last record, as that entry's field `p` (what the engine
    says is pending after it: services/readside/decisions.py `Mark`; not a record: not in the
    hash chain nor the archive, and every reader of records passes it by)."""

    game: str
    key: str  # the log's key
    expected: int
    records: Sequence[bytes]
    outbox: Sequence[OutboxCommand]
    mark: bytes = b""


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
            if cmd.name not in OUTBOX_COMMANDS:
                raise ValueError(f"{cmd.name!r} is not an outbox command")
        return await self.batcher.submit(item)

    async def append_many(self, items: Sequence[Append]) -> list[int | BaseException]:
        """`append` for each of `items` (one game each), batched as concurrent appends are:
        each one's new version or its error, never raised (one future for all, not one each)."""
        for item in items:
            for cmd in item.outbox:
                if cmd.name not in OUTBOX_COMMANDS:
                    raise ValueError(f"{cmd.name!r} is not an outbox command")
        return await self.batcher.submit_many(items)

    def _groups(self, items: list[Append]) -> list[list[int]]:
        """Which appends may share a call: all on one Redis; on a cluster, those of one
        partition whose outbox keys all carry its tag."""
        n = self.per_call
        if not is_cluster(self.client):  # one Redis: every append may share a call
            return [list(range(k, min(k + n, len(items)))) for k in range(0, len(items), n)]
        groups: dict[str, list[int]] = {}
        for i, a in enumerate(items):
            tag = "{" + self.layout.tag(a.game) + "}"
            group = tag if all(tag in c.key for c in a.outbox) else f"alone {i}"
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
                out[i] = reply if isinstance(reply, BaseException) else _result(items[i], reply[k])
        return out

    async def _call(self, batch: list[Append]) -> list[Any]:
        keys: dict[str, int] = {}
        args: list[str | bytes | int] = [len(batch)]
        for a in batch:
            log = keys.setdefault(a.key, len(keys) + 1)
            cmds: list[str | bytes | int] = []
            for cmd in a.outbox:
                cmds += [
                    cmd.name,
                    keys.setdefault(cmd.key, len(keys) + 1),
                    len(cmd.args),
                    *cmd.args,
                ]
            args += [log, a.expected, len(a.records), len(cmds), a.mark, *a.records, *cmds]
        names = list(keys)
        self.calls += 1
        try:
            reply: Any = await self._evalsha(names, args)
        except NoScriptError:  # a restarted or new server (a promoted replica): load, again
            await self._load()
            reply = await self._evalsha(names, args)
        return list(reply)

    def _evalsha(self, keys: list[str], args: list[str | bytes | int]) -> Any:
        sha = self.script.sha
        # execute_command: a cluster pipeline refuses its evalsha method, not EVALSHA
        return self.auto.run(lambda p: p.execute_command("EVALSHA", sha, len(keys), *keys, *args))

    async def _load(self) -> None:
        """SCRIPT LOAD once for every call that met NOSCRIPT at the same time."""
        if self._loading is None:
            self._loading = asyncio.ensure_future(self.client.script_load(APPEND_LUA))
            self._loading.add_done_callback(lambda _: setattr(self, "_loading", None))
        await asyncio.shield(self._loading)


def _result(a: Append, reply: Any) -> int | BaseException:
    status, value = int(reply[0]), reply[1]
    if status == 1:
        return int(value)
    if status == 0:
        return VersionConflict(a.game, a.expected, int(value))
    text = value.decode() if isinstance(value, bytes) else str(value)
    return ResponseError(text)
