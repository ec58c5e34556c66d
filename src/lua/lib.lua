-- lib.lua: helpers shared by every skyq script. The loader puts this text in
-- front of each script, so a script sees these locals as if it wrote them.
--
-- Record layout (one hash field per message, kept small on purpose):
--   <enqueuedAt base36>|<priority>|<maxAttempts>|<f|e><backoffMs>|<s|j><body>
-- Ready-set score: priority * READY_SPAN + seq, so lower priority first and
-- FIFO among equals (seq comes from the group's counter).

-- KEYS, the same for every script, in the order of src/keys.ts:
local delayedKey, readyKey, activeKey, deadKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local msgKey, dueKey, attKey, errKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local reasonKey, seqKey, wakeKey, pausedKey = KEYS[9], KEYS[10], KEYS[11], KEYS[12]

local READY_SPAN = 8589934592 -- 2^33 sequence numbers per priority level
local CHUNK = 6000 -- stay well below Lua's unpack() limit

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Numbers above 1e14 lose digits through tostring(); scores go through this.
local function num(x)
  return string.format('%.17g', x)
end

-- Run CMD KEY <args...> with LIST spread in slices (ZADD, HSET, HDEL, ZREM...).
local function bulk(cmd, key, list)
  for i = 1, #list, CHUNK do
    local last = math.min(i + CHUNK - 1, #list)
    redis.call(cmd, key, unpack(list, i, last))
  end
end

-- HMGET / ZMSCORE over a long list, results in list order.
local function bulkRead(cmd, key, list)
  local out = {}
  for i = 1, #list, CHUNK do
    local last = math.min(i + CHUNK - 1, #list)
    local part = redis.call(cmd, key, unpack(list, i, last))
    for j = 1, #part do
      out[#out + 1] = part[j]
    end
  end
  return out
end

-- ARGV[first..] as a table. Not { unpack(ARGV, first) }: unpack() fails past
-- about 8,000 values ("too many results to unpack"), and a poll may ack 10,000.
local function argvFrom(first)
  local out = {}
  for i = first, #ARGV do
    out[#out + 1] = ARGV[i]
  end
  return out
end

-- Returns priority, maxAttempts, backoff kind, backoff ms; nil when malformed.
local function parseHeader(rec)
  local pri, att, kind, delay = string.match(rec, '^[0-9a-z]*|(%d+)|(%d+)|([fe])(%d+)|[sj]')
  if not pri then
    return nil
  end
  return tonumber(pri), tonumber(att), kind, tonumber(delay)
end

local function readyScore(priority, seq)
  return num(priority * READY_SPAN + (seq % READY_SPAN))
end

-- Wake one idle consumer of the group; the list never holds more than one token.
local function wake()
  if redis.call('LLEN', wakeKey) == 0 then
    redis.call('RPUSH', wakeKey, '1')
  end
end

-- Wake when a new due time (a delayed-set score, in the set's unit) comes
-- before the current head of the delayed set.
local function wakeIfEarlier(score)
  local head = redis.call('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
  if head[2] == nil or score < tonumber(head[2]) then
    wake()
  end
end

-- Keep only the ids that are members of a sorted set.
local function membersOf(key, ids)
  local scores = bulkRead('ZMSCORE', key, ids)
  local found = {}
  for i = 1, #ids do
    if scores[i] then
      found[#found + 1] = ids[i]
    end
  end
  return found
end

-- Forget everything stored for these ids except set memberships.
local function forget(ids)
  if #ids == 0 then
    return
  end
  bulk('HDEL', msgKey, ids)
  bulk('HDEL', dueKey, ids)
  -- Failures are rare: skip passing every id to hashes that do not exist.
  for _, key in ipairs({ attKey, errKey, reasonKey }) do
    if redis.call('EXISTS', key) == 1 then
      bulk('HDEL', key, ids)
    end
  end
end

-- Ack: drop the ids that are still leased; a stale ack of a message whose
-- lease already expired (and that went back to work) changes nothing.
local function ackLeased(ids)
  local leased = membersOf(activeKey, ids)
  if #leased > 0 then
    bulk('ZREM', activeKey, leased)
    forget(leased)
  end
  return #leased
end

-- Base36 for generated ids (group:seq36), short so every copy costs little.
local DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'
local function base36(n)
  local out = ''
  repeat
    local d = n % 36
    out = string.sub(DIGITS, d + 1, d + 1) .. out
    n = (n - d) / 36
  until n == 0
  return out
end

-- Dead letters named by a call: ARGV[1] '*' for the oldest ARGV[2], or 'ids' with ARGV[2..].
local function selectDead()
  if ARGV[1] == '*' then
    return redis.call('ZRANGE', deadKey, 0, tonumber(ARGV[2]) - 1)
  end
  return membersOf(deadKey, argvFrom(2))
end
