"""Lua scripts: each ticket transition is one atomic step, whichever process runs it.

All ticket keys share the `{mm}` hash tag (one Cluster slot). FORM also appends to the
matchmaker's matches stream `{ns}:{mm}:matches` (a `NewMatch`, services/contracts/streams.py),
in the same slot, in the same step, so a table is published exactly once and only if every
ticket it names was still queued. Engine workers read that stream beside the partitions'.
"""

ENQUEUE = """
-- KEYS: player, ticket, queue (rating), waits (enqueued), expiry
-- ARGV: ticket, player, mode, rating, now, exp, gc_ms, expiry member, name
local cur = redis.call('GET', KEYS[1])
if cur then return {0, cur} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[7])
redis.call('HSET', KEYS[2], 'player', ARGV[2], 'mode', ARGV[3], 'rating', ARGV[4],
           'enq', ARGV[5], 'exp', ARGV[6], 'state', 'queued', 'name', ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[6], ARGV[8])
return {1, ARGV[1]}
"""

REFRESH = """
-- KEYS: ticket, expiry, player; ARGV: exp, gc_ms, expiry member, ticket
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'queued' then return state or false end
redis.call('HSET', KEYS[1], 'exp', ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if redis.call('GET', KEYS[3]) == ARGV[4] then redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
return state
"""

# Cancel (by its owner) or expire (when due) a queued ticket. Returns {state, 1} if this call
# made the change, else {why, 0}: the state it already had (a repeated cancel, or an expiry
# another matchmaker got to first), 'missing', 'forbidden', or 'queued' (not due yet).
RETIRE = """
-- KEYS: ticket, queue, waits, expiry, player
-- ARGV: ticket, player, mode, new state, now, gc_ms, expiry member, channel
local t = redis.call('HMGET', KEYS[1], 'state', 'player', 'mode', 'exp')
if not t[1] then
  redis.call('ZREM', KEYS[2], ARGV[1]); redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[7])
  return {'missing', 0}
end
if t[2] ~= ARGV[2] then return {'forbidden', 0} end
if t[3] ~= ARGV[3] then return {'forbidden', 0} end
if t[1] ~= 'queued' then return {t[1], 0} end
if ARGV[4] == 'expired' and tonumber(t[4]) > tonumber(ARGV[5]) then return {'queued', 0} end
redis.call('HSET', KEYS[1], 'state', ARGV[4], 'done', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('ZREM', KEYS[2], ARGV[1]); redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[7])
if redis.call('GET', KEYS[5]) == ARGV[1] then redis.call('DEL', KEYS[5]) end
redis.call('PUBLISH', ARGV[8], ARGV[1])
return {ARGV[4], 1}
"""

FORM = """
-- KEYS: queue, waits, expiry, matches stream, then n tickets, then n players
-- ARGV: mode, now, n, game, match message (msgpack NewMatch), gc_ms, channel,
--       then per ticket: ticket, player, seat, token
local n = tonumber(ARGV[3])
local now = tonumber(ARGV[2])
for i = 1, n do
  local b = 7 + (i - 1) * 4
  local t = redis.call('HMGET', KEYS[4 + i], 'state', 'mode', 'player', 'exp')
  if t[1] ~= 'queued' or t[2] ~= ARGV[1] or t[3] ~= ARGV[b + 2] or tonumber(t[4]) <= now then
    return {0, ARGV[b + 1]}
  end
end
local ids = {}
for i = 1, n do
  local b = 7 + (i - 1) * 4
  local id = ARGV[b + 1]
  redis.call('HSET', KEYS[4 + i], 'state', 'matched', 'done', ARGV[2], 'game', ARGV[4],
             'seat', ARGV[b + 3], 'token', ARGV[b + 4])
  redis.call('PEXPIRE', KEYS[4 + i], ARGV[6])
  redis.call('ZREM', KEYS[1], id); redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], ARGV[1] .. '|' .. id)
  if redis.call('GET', KEYS[4 + n + i]) == id then redis.call('DEL', KEYS[4 + n + i]) end
  ids[i] = id
end
local mid = redis.call('XADD', KEYS[4], '*', 'm', ARGV[5])
redis.call('PUBLISH', ARGV[7], table.concat(ids, ' '))
return {1, mid}
"""
