-- lib.lua: helpers shared by every group script. The loader puts this text in
-- front of each one, so a script sees these locals as if it wrote them (the
-- multi-group scripts, such as watch-many.lua, stand alone).
--
-- Record (msg hash, one field per message):
--   <enqueuedAt base36>|<priority>|<maxAttempts>|<f|e><backoffMs>[-<capMs>]|[tags]<kind><body>
--   kind: s string, j JSON, b bytes, r raw member (no body stored: the body is the id)
--   tags (format 2, src/queue/format.ts), only when present: `n<bytes>:<name>`, then
--   `p<bytes>:<at base36>:<schedule id>`, then (format 8, flow-lib.lua) `f<bytes>:<parent
--   ref>` on a flow child and `c<bytes>:<children>` on a flow parent. Patterns that read the
--   first four fields (maxAttemptsOf, fail.lua) never reach them.
-- Scripts never read a record to move a message: priorities other than 0 are
-- also kept in the pri hash, so promotion costs the same for any body size.
-- Messages of priority 0 wait in the delayed set until leased, due or not: its
-- order (due time, then id) is theirs. While some message of another priority
-- is pending, due ones are promoted to the ready set and leased from there.
-- Ready set: score = priority; member = due ms as 11 hex digits, then the id.
--   Among equal priorities the lowest member comes first: the earliest due
--   time, then id order (generated ids sort in the order they were added).
-- Lease: while a message is leased the due hash holds "<due ms>/<token>"; ack,
--   fail, release and extend act only for a caller whose token matches.

-- KEYS, the same for every script, in the order of src/base/keys.ts:
local delayedKey, readyKey, activeKey, deadKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local msgKey, dueKey, priKey, attKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local errKey, reasonKey, seqKey, tokKey = KEYS[9], KEYS[10], KEYS[11], KEYS[12]
local wakeKey, nextKey, pausedKey, bigKey = KEYS[13], KEYS[14], KEYS[15], KEYS[16]
local claimsKey, claimedKey, renamedKey, spillsKey = KEYS[17], KEYS[18], KEYS[19], KEYS[20]
local doneKey, histKey, finKey = KEYS[21], KEYS[22], KEYS[23]
local preKey = KEYS[26] -- previews.lua (24 and 25: schedule-lib.lua, dedupe.lua)
local progressKey = KEYS[28] -- report.lua: progress and log lines of running jobs (lib-ids.lua)
-- Flows (flow-lib.lua): parents waiting, their flow data, outcomes for other slots, ended parents.
local waitingKey, flowKey, outboxKey, flowEndsKey = KEYS[29], KEYS[30], KEYS[31], KEYS[32]

-- The group's data format (format-guard.lua), before anything else is read or written. A
-- script that only reads (SKYQ_WRITES false: its header says "read only", scripts.ts) checks it
-- and leaves it: a newer skyq that only reads does not halt older ones.
guardFormat(KEYS[27], SKYQ_WRITES)

local CHUNK = 6000 -- stay well below Lua's unpack() limit

-- A hash of a few hundred short fields stays a listpack, where each field is
-- found by a scan: one HSET or HMGET of 500 fields then costs 500 scans (5.8
-- µs a field here, against 0.66 in a hashtable). One field with a value longer
-- than hash-max-listpack-value turns a hash into a hashtable for good, and
-- since it is never deleted, the hash is never recreated small. Its name is
-- not valid UTF-8; src/base/keys.ts KEEP_FIELD is the same.
local KEEP_FIELD = '\255skyq:keep-hashtable'
local KEEP_VALUE = string.rep('-', 80)

-- The active set is a sorted set emptied by every ack and refilled by every claim: a
-- small one is a listpack, where each ZADD scans and parses every score before it
-- (a fifth of Redis's instructions for claims of 200). A member longer than
-- zset-max-listpack-value makes it a skiplist for good, so this one (format 7), at
-- +inf where no expiry reaches, is never leased, counted or listed.
local KEEP_MEMBER = KEEP_FIELD .. KEEP_VALUE

-- How many leases the active set holds (the placeholder left out).
local function activeCount()
  return redis.call('ZCOUNT', activeKey, '-inf', '(+inf')
end

-- Records longer than this have their size in the big hash, so a claim knows
-- how many records fit its byte budget before it reads them.
local BIG_RECORD = 1024

-- A spilled record's key, beside the big hash: `{prefix:g}:body:<nonce>` (src/queue/spill.ts).
local function bodyKey(nonce)
  return string.sub(bigKey, 1, -4) .. 'body:' .. nonce
end

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- A body key still listed in the spills set belongs to an add that never ran
-- (src/queue/spill.ts): after this long nobody will keep it, and an add that
-- comes later still finds its body gone and fails. src/queue/spill.ts has the same.
local SPILL_ORPHAN_MS = 3600000
local SWEEP = 8 -- most orphans one call deletes: the cost stays bounded

-- Delete the body keys of listed nonces that are still listed (no add kept them).
local function dropSpills(nonces)
  for i = 1, #nonces do
    if redis.call('ZREM', spillsKey, nonces[i]) == 1 then
      redis.call('DEL', bodyKey(nonces[i]))
    end
  end
end

-- Delete a few orphan body keys listed before now - SPILL_ORPHAN_MS (`now`: the
-- caller's reading of TIME, or nil to take one only when something is listed).
local function sweepSpills(now)
  if redis.call('EXISTS', spillsKey) == 0 then
    return
  end
  local t = now or nowMs()
  local old = redis.call('ZRANGEBYSCORE', spillsKey, '-inf', t - SPILL_ORPHAN_MS, 'LIMIT', 0, SWEEP)
  dropSpills(old)
end

-- Run CMD KEY <args...> with LIST spread in slices (ZADD, HSET, HDEL, ZREM...).
local function bulk(cmd, key, list)
  for i = 1, #list, CHUNK do
    local last = math.min(i + CHUNK - 1, #list)
    redis.call(cmd, key, unpack(list, i, last))
  end
end

-- HMGET / ZMSCORE over a long list, results in list order. A list of one chunk (nearly
-- every call) takes the reply as it is: copying it made a table of garbage a read.
local function bulkRead(cmd, key, list)
  if #list <= CHUNK then
    return #list > 0 and redis.call(cmd, key, unpack(list)) or {}
  end
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

-- A delayed-set score as a due time in ms. Other programs may ZADD any score:
-- below 0 (-5, -inf) is due since ever (0), +inf and the like are never (the
-- far future); both stay numbers that ready members and replies can hold.
local function msOfScore(score, unit)
  local ms = tonumber(score) * unit
  if ms <= 0 then
    return 0
  end
  return ms >= 9e15 and 9e15 or math.floor(ms + 0.5)
end

local function readyMember(dueMs, id)
  return string.format('%011x', dueMs) .. id
end

-- The due ms of a due-hash value ("<ms>" or "<ms>/<token>"), as text: a reply or a
-- record takes it as it is (Lua formats each number it turns into text with sprintf,
-- a cost per message that showed in Redis's profile).
local function dueTextOf(value)
  return string.match(value, '^[^/]*')
end

-- The same as a number.
local function dueOf(value)
  return tonumber(dueTextOf(value))
end

-- Small whole numbers as text, each formatted once per call (lengths of ids, attempts).
local SMALL_TEXT = setmetatable({}, {
  __index = function(texts, n)
    local text = string.format('%d', n)
    texts[n] = text
    return text
  end,
})

-- maxAttempts from a record's header; nil when the header does not parse.
local function maxAttemptsOf(rec)
  return tonumber(string.match(rec, '^[0-9a-z]*|%d+|(%d+)|'))
end

-- HSET of many fields (id, value, id, value…) into a hash kept a hashtable.
local function fill(key, list)
  redis.call('HSET', key, KEEP_FIELD, KEEP_VALUE)
  bulk('HSET', key, list)
end

-- Whether some pending message has a priority other than 0 (the pri hash holds
-- only those, besides KEEP_FIELD).
local function anyPriority()
  return redis.call('HLEN', priKey) > 1
end

-- Priorities of ids (0 for most: only others are stored), or nil when all are 0.
local function prioritiesOf(ids)
  if not anyPriority() then
    return nil
  end
  return bulkRead('HMGET', priKey, ids)
end

-- Put messages in the ready set, ordered by priority, then due time, then id.
local function toReady(ids, dues)
  if #ids == 0 then
    return
  end
  local pris = prioritiesOf(ids)
  local members, fields = {}, {}
  for i = 1, #ids do
    members[#members + 1] = pris and tonumber(pris[i]) or 0
    members[#members + 1] = readyMember(dues[i], ids[i])
    fields[#fields + 1] = ids[i]
    fields[#fields + 1] = dues[i]
  end
  bulk('ZADD', readyKey, members)
  fill(dueKey, fields)
end

-- Put messages back to wait for a consumer, at their due times: in the delayed
-- set while every pending message has priority 0 (due order is then the order,
-- and claims lease straight from there), else in the ready set by priority.
local function requeue(ids, dues, unit)
  if #ids == 0 then
    return
  end
  if anyPriority() then
    -- A copy of one of them in the delayed set (another program ZADDed the id while it ran:
    -- claim-lib.lua notHeldElsewhere) is the same message, as the ZADD below makes it: it goes.
    bulk('ZREM', delayedKey, ids)
    toReady(ids, dues)
    return
  end
  local scores = {}
  for i = 1, #ids do
    scores[#scores + 1] = dues[i] / unit
    scores[#scores + 1] = ids[i]
  end
  bulk('ZADD', delayedKey, scores)
  bulk('HDEL', dueKey, ids)
end

-- Wake one idle consumer of the group. The list holds at most one token: the
-- earliest due time (ms) consumers were not told of, 0 when work is ready now.
-- A consumer that gets a token for later sleeps until just before that time,
-- so a stream of adds costs a claim per due window, not a claim per add.
local function pushWake(dueMs)
  local held = redis.call('LINDEX', wakeKey, 0)
  if not held then
    redis.call('RPUSH', wakeKey, dueMs)
  elseif dueMs < (tonumber(held) or 0) then
    redis.call('LSET', wakeKey, 0, dueMs)
  end
end

-- A paused group wakes nobody on adds: resume does (pause.lua).
local function wake(dueMs)
  if redis.call('EXISTS', pausedKey) == 0 then
    pushWake(dueMs or 0)
  end
end

-- Consumers look at the group at the time in `next` anyway (each claim sets
-- it); a message due before that wakes one. Waking moves `next` to that due
-- time, so later ones due after it send no more tokens.
local function wakeIfEarlier(dueMs)
  if redis.call('EXISTS', pausedKey) == 1 then
    return
  end
  local planned = tonumber(redis.call('GET', nextKey))
  if planned == nil or dueMs < planned then
    redis.call('SET', nextKey, dueMs)
    wake(dueMs)
  end
end
