-- add.lua: add messages to one group.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] earliest due ms among the delayed ones, '' when none
-- ARGV[3], [4], [5] how many messages of each kind follow, in this order:
--   generated ids: one taken by another record (the counter went back) gets a fresh
--     one; one holding this very record is this add sent again, and is left alone;
--   caller ids: still pending → left as it is; dead → replaced;
--   generated ids sent again after an unknown outcome: there already → done
-- ARGV[6] how many of them are spilled (their record is a stub: see src/queue/spill.ts)
-- then 3 per message: id, score ('' = due now, else the delayed-set score in
--   the queue's unit), record
-- then 3 per spilled message: its position among the messages, the record's
--   bytes, the nonce of its body key (written already, with an expiry)
-- then id, priority pairs for the messages whose priority is not 0
-- Ids and scores come formatted from the client: number-to-string work is slow in Lua.
-- Messages of priority 0 wait in the delayed set even when due now: due order
-- is their order, and claims lease them from there (see claim.lua).
-- Returns { added, then position, new id for each generated id that was taken }.
-- The delayed set has the plain name other programs use too: check it before
-- any write, since a script that fails half-way leaves its first writes behind.
-- (The braced keys are skyq's own.)
local kind = redis.call('TYPE', delayedKey)['ok']
if kind ~= 'none' and kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE key ' .. delayedKey .. ' holds a ' .. kind .. ', not a zset')
end

local unit = tonumber(ARGV[1])
local nGenerated, nCallers, nRetried = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local nSpilled = tonumber(ARGV[6])
local count = nGenerated + nCallers + nRetried
local FIRST = 7
local SPILLED = FIRST + count * 3
local ids = {}
for i = 1, count do
  ids[i] = ARGV[FIRST + (i - 1) * 3]
end
local priorities = {}
for i = SPILLED + nSpilled * 3, #ARGV, 2 do
  priorities[ARGV[i]] = ARGV[i + 1]
end

-- Which ids exist already (no record is read for that). A caller id is pending
-- when it is delayed, ready or active, and dead when it is a dead letter. A
-- generated id is checked too, since a counter that went back (an older AOF, a
-- failover to a lagging replica) repeats them: every skyq message has a record,
-- and the record tells a repeated id from a repeated add.
local skip, renamed = {}, {}
if nGenerated > 0 then
  local list = {}
  for i = 1, nGenerated do
    list[i] = ids[i]
  end
  local taken = bulkRead('HMGET', msgKey, list)
  for i = 1, nGenerated do
    if taken[i] == ARGV[FIRST + (i - 1) * 3 + 2] then
      -- The same record under the same id: this very add, sent again by a client whose
      -- connection died before the answer came (ioredis resends unanswered commands).
      skip[i] = true
    elseif taken[i] then
      local fresh = freshId()
      priorities[fresh] = priorities[ids[i]]
      ids[i] = fresh
      renamed[#renamed + 1] = i
      renamed[#renamed + 1] = fresh
    end
  end
end
if count > nGenerated then
  local list = {}
  for i = nGenerated + 1, count do
    list[#list + 1] = ids[i]
  end
  local delayed = bulkRead('ZMSCORE', delayedKey, list)
  local live = bulkRead('HMGET', dueKey, list)
  local dead = bulkRead('ZMSCORE', deadKey, list)
  local revived, seen = {}, {}
  for j = 1, #list do
    local i = nGenerated + j
    local caller = i <= nGenerated + nCallers
    -- Pending, the same caller id earlier in this call (the first wins, as two calls
    -- would), or a retried generated id that got in after all.
    if delayed[j] or live[j] or seen[list[j]] or (dead[j] and not caller) then
      skip[i] = true
    elseif dead[j] then
      revived[#revived + 1] = list[j]
    end
    seen[list[j]] = true
  end
  if #revived > 0 then
    bulk('ZREM', deadKey, revived)
    forget(revived)
  end
end

local delayed, readyIds, readyDues, records, pris = {}, {}, {}, {}, {}
local now = nil
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
        delayed[#delayed + 1] = now / unit
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
-- Spilled bodies: kept for good with the messages stored, and with those
-- already there by this very record (an add sent again); dropped otherwise.
for j = SPILLED, SPILLED + nSpilled * 3 - 1, 3 do
  local i, key = tonumber(ARGV[j]), bodyKey(ARGV[j + 2])
  if not skip[i] then
    bigs[#bigs + 1] = ids[i]
    bigs[#bigs + 1] = ARGV[j + 1] .. '/' .. ARGV[j + 2]
    redis.call('PERSIST', key)
  elseif redis.call('HGET', msgKey, ids[i]) == ARGV[FIRST + (i - 1) * 3 + 2] then
    redis.call('PERSIST', key)
  else
    redis.call('DEL', key)
  end
end
if #bigs > 0 then
  fill(bigKey, bigs)
end

local out = { #records / 2 }
for i = 1, #renamed do
  out[#out + 1] = renamed[i]
end
return out
