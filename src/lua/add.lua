-- add.lua: add messages to one group.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] earliest due ms among the delayed ones, '' when none
-- ARGV[3], [4], [5] how many messages of each kind follow, in this order:
--   generated ids: one taken by another record (the counter went back) gets a fresh
--     one; one holding this very record is this add sent again, and is left alone;
--   caller ids: still pending (a waiting flow parent too) → left as it is; dead, or done
--     and kept → replaced (a kept done entry goes with its record: it told of the
--     previous run);
--   generated ids sent again after an unknown outcome (AddBulkError.retry): as the
--     first kind. An id whose message went in under another (renamed) id is found
--     through the renamed hash, so the caller learns that id and not the id's
--     present holder.
-- ARGV[6] how many of them are spilled (their record is a stub: see src/queue/spill.ts)
-- ARGV[7] events flag ('1' on: an added event for each message stored, events.lua)
-- ARGV[8] how many dedupe windows follow the spilled section: caller id, window ms
--   pairs. While a caller id's window is open (KEYS[25], below) its add changes
--   nothing, whatever became of its message: pending, done, trimmed or dead.
-- then 3 per message: id, score ('' = due now, else the delayed-set score in
--   the queue's unit), record
-- then 3 per spilled message: its position among the messages, the record's
--   bytes, the nonce of its body key (written already, listed in the spills set)
-- then the dedupe windows (ARGV[8])
-- then id, priority pairs for the messages whose priority is not 0
-- Ids and scores come formatted from the client: number-to-string work is slow in Lua.
-- Messages of priority 0 wait in the delayed set even when due now: due order
-- is their order, and claims lease them from there (see claim.lua).
-- Returns { added, then position, new id for each generated id that was taken }.
-- Fails, storing nothing, when a message it would store has lost its body key
-- (an add that arrived after its orphan sweep, see lib.lua SPILL_ORPHAN_MS).
-- The delayed set has the plain name other programs use too: check it before
-- any write, since a script that fails half-way leaves its first writes behind.
-- (The braced keys are skyq's own.)
local kind = redis.call('TYPE', delayedKey)['ok']
if kind ~= 'none' and kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE key ' .. delayedKey .. ' holds a ' .. kind .. ', not a zset')
end

-- The arguments, all of them, before the first write (args.lua).
argCount(8, -1)
argUnit(1)
if ARGV[2] ~= '' then
  argNumber(2, "earliest due ms among the delayed ones ('' for none)")
end
local given = argInt(3, 'count of generated ids', 0, 100000) + argInt(4, 'count of caller ids', 0, 100000)
  + argInt(5, 'count of retried generated ids', 0, 100000)
argEvents(7)
local spilledEnd = 8 + given * 3 + argInt(6, 'count of spilled messages', 0, given) * 3
local windowsEnd = spilledEnd + argInt(8, 'count of dedupe windows', 0, given) * 2
if #ARGV < windowsEnd or (#ARGV - windowsEnd) % 2 ~= 0 then
  error({ err = 'ERR skyq: wrong number of arguments: ' .. windowsEnd .. ' for ' .. given
    .. ' messages and their windows, then id, priority pairs, got ' .. #ARGV })
end
for i = 9, 8 + given * 3, 3 do
  argText(i, 'message id')
  if ARGV[i + 1] ~= '' then
    argNumber(i + 1, "score ('' for due now)")
  end
end
for i = 9 + given * 3, spilledEnd, 3 do
  argInt(i, 'position of a spilled message', 1, given)
  argInt(i + 1, "a spilled record's bytes", 0)
  argText(i + 2, "a spilled body's nonce")
end
for i = spilledEnd + 1, windowsEnd, 2 do
  argText(i, 'caller id of a dedupe window')
  argInt(i + 1, 'dedupe window in ms', 1)
end
for i = windowsEnd + 1, #ARGV, 2 do
  argText(i, 'message id of a priority')
  argInt(i + 1, 'priority', 0, 1000000)
end

local unit = tonumber(ARGV[1])
local nGenerated, nCallers, nRetried = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local nSpilled = tonumber(ARGV[6])
local count = nGenerated + nCallers + nRetried
setEvents(ARGV[7])
local nWindows = tonumber(ARGV[8])
local FIRST = 9
local SPILLED = FIRST + count * 3
local ids = {}
for i = 1, count do
  ids[i] = ARGV[FIRST + (i - 1) * 3]
end
local WINDOWS = SPILLED + nSpilled * 3
local windows = {} -- caller id → window ms
for i = WINDOWS, WINDOWS + nWindows * 2 - 1, 2 do
  windows[ARGV[i]] = tonumber(ARGV[i + 1])
end
local priorities = {}
for i = WINDOWS + nWindows * 2, #ARGV, 2 do
  priorities[ARGV[i]] = ARGV[i + 1]
end
local stubbed = {} -- position → true for spilled messages
for j = SPILLED, SPILLED + nSpilled * 3 - 1, 3 do
  stubbed[tonumber(ARGV[j])] = true
end
local function recordOf(i)
  return ARGV[FIRST + (i - 1) * 3 + 2]
end

-- Whether a stored record is message i's own: the same record, or for a spilled
-- one a stub of the same message sent another time (only its 4-character
-- attempt differs, see src/queue/spill.ts).
local function isOwn(stored, i)
  local rec = recordOf(i)
  if not stored or stored == rec then
    return stored == rec
  end
  return stubbed[i] and #stored == #rec and string.sub(stored, 1, -5) == string.sub(rec, 1, -5)
end

-- Which ids exist already (no record is read for that). A caller id is pending
-- when it is delayed, ready or active, and dead when it is a dead letter. A
-- generated id is checked too, since a counter that went back (an older AOF, a
-- failover to a lagging replica) repeats them: every skyq message has a record,
-- and the record tells a repeated id from a repeated add.
local skip, renamed, remember = {}, {}, {}
local generated = {}
for i = 1, nGenerated do
  generated[#generated + 1] = i
end
for i = nGenerated + nCallers + 1, count do
  generated[#generated + 1] = i
end
if #generated > 0 then
  local list = {}
  for k = 1, #generated do
    list[k] = ids[generated[k]]
  end
  local taken = bulkRead('HMGET', msgKey, list)
  local memory = redis.call('EXISTS', renamedKey) == 1
  for k = 1, #generated do
    local i = generated[k]
    if isOwn(taken[k], i) then
      -- This very add, sent again: by a client whose connection died before the
      -- answer came (ioredis resends unanswered commands), or by a retry.
      skip[i] = true
    elseif taken[k] then
      local earlier = memory and redis.call('HGET', renamedKey, ids[i])
      if earlier and isOwn(redis.call('HGET', msgKey, earlier), i) then
        -- Sent again after it went in under a fresh id: that id is the answer.
        skip[i] = true
        ids[i] = earlier
      else
        local fresh = freshId()
        priorities[fresh] = priorities[ids[i]]
        remember[#remember + 1] = ids[i]
        remember[#remember + 1] = fresh
        remember[#remember + 1] = '>' .. fresh
        remember[#remember + 1] = ids[i]
        ids[i] = fresh
      end
      renamed[#renamed + 1] = i
      renamed[#renamed + 1] = ids[i]
    end
  end
end
local revived, fresh = {}, {}
if nCallers > 0 then
  local list = {}
  for i = nGenerated + 1, nGenerated + nCallers do
    list[#list + 1] = ids[i]
  end
  local delayed = bulkRead('ZMSCORE', delayedKey, list)
  local live = bulkRead('HMGET', dueKey, list)
  local dead = bulkRead('ZMSCORE', deadKey, list)
  local open = openWindows(list)
  -- A flow parent waiting for its children is pending too (flow-lib.lua): read only where some wait.
  local waiting = redis.call('EXISTS', waitingKey) == 1 and bulkRead('ZMSCORE', waitingKey, list) or {}
  local seen = {}
  for j = 1, #list do
    local i = nGenerated + j
    -- Pending, in an open dedupe window, or the same caller id earlier in this call (the
    -- first wins, as two calls would).
    if delayed[j] or live[j] or waiting[j] or open[j] or seen[list[j]] then
      skip[i] = true
    elseif dead[j] then
      revived[#revived + 1] = list[j]
    else
      fresh[#fresh + 1] = list[j]
    end
    seen[list[j]] = true
  end
end

-- Every message stored here needs its body key: check them all before any write.
for j = SPILLED, SPILLED + nSpilled * 3 - 1, 3 do
  local i = tonumber(ARGV[j])
  if not skip[i] and redis.call('EXISTS', bodyKey(ARGV[j + 2])) == 0 then
    return redis.error_reply('ERR skyq: the body key of spilled message ' .. ids[i]
      .. ' is gone (its add came over an hour after the body); nothing was added: add again')
  end
end

if #remember > 0 then
  redis.call('HSET', renamedKey, unpack(remember))
end
if #revived > 0 then
  -- A dead caller id is replaced: its old record, and its old body key, go.
  bulk('ZREM', deadKey, revived)
  forget(revived)
end
if #fresh > 0 then
  -- So is a finished one still kept: its history entry and record (history.lua).
  local rerun = dropHistory(fresh)
  if #rerun > 0 then
    forget(rerun)
  end
end

local delayed, readyIds, readyDues, records, pris = {}, {}, {}, {}, {}
local now, nowScore = nil, nil
for i = 1, count do
  if not skip[i] then
    local base = FIRST + (i - 1) * 3
    local id, score = ids[i], ARGV[base + 1]
    local priority = priorities[id]
    records[#records + 1] = id
    records[#records + 1] = ARGV[base + 2]
    if priority then
      pris[#pris + 1] = id
      pris[#pris + 1] = priority
    end
    if score ~= '' then
      delayed[#delayed + 1] = score
      delayed[#delayed + 1] = id
    else
      now = now or nowMs()
      if not priority then
        -- Formatted once: redis.call turns each number argument into text with sprintf.
        nowScore = nowScore or (unit == 1 and string.format('%d', now) or string.format('%.17g', now / unit))
        delayed[#delayed + 1] = nowScore
        delayed[#delayed + 1] = id
      else
        readyIds[#readyIds + 1] = id
        readyDues[#readyDues + 1] = now
      end
    end
  end
end

-- Sizes of big records, and "<bytes>/<nonce>" of spilled ones (below).
local bigs = {}
if #records > 0 then
  fill(msgKey, records)
  keepPreviews(records)
  for i = 2, #records, 2 do
    if #records[i] > BIG_RECORD then
      bigs[#bigs + 1] = records[i - 1]
      bigs[#bigs + 1] = #records[i]
    end
  end
end
if #pris > 0 then
  fill(priKey, pris)
end
if #readyIds > 0 then
  toReady(readyIds, readyDues)
end
if #delayed > 0 then
  bulk('ZADD', delayedKey, delayed)
end
if now then
  wake()
elseif ARGV[2] ~= '' and #delayed > 0 then
  wakeIfEarlier(tonumber(ARGV[2]))
end
-- Spilled bodies: kept with the messages stored, and with those already there by
-- this very record (an add sent again); dropped otherwise. Either way the nonce
-- leaves the spills set: no orphan sweep may touch it now.
for j = SPILLED, SPILLED + nSpilled * 3 - 1, 3 do
  local i, nonce = tonumber(ARGV[j]), ARGV[j + 2]
  redis.call('ZREM', spillsKey, nonce)
  if not skip[i] then
    bigs[#bigs + 1] = ids[i]
    bigs[#bigs + 1] = ARGV[j + 1] .. '/' .. nonce
  elseif redis.call('HGET', msgKey, ids[i]) ~= recordOf(i) then
    redis.call('DEL', bodyKey(nonce))
  end
end
if #bigs > 0 then
  fill(bigKey, bigs)
end

sweepSpills(now)
openNewWindows(records, windows, nCallers)

if eventsOn and #records > 0 then
  local ids, names = {}, {}
  for i = 1, #records, 2 do
    ids[#ids + 1] = records[i]
    names[#names + 1] = nameOf(records[i + 1])
  end
  publish('added', ids, names, '')
end

local out = { #records / 2 }
for i = 1, #renamed do
  out[#out + 1] = renamed[i]
end
return out
