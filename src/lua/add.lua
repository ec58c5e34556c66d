-- add.lua: add messages to one group.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] earliest due ms among the delayed ones, '' when none
-- then 5 per message: id, kind, score, priority, record
--   kind: 'c' the caller's id: still pending → left as it is; dead → replaced
--         'g' generated: taken already (counter went back) → a fresh one
--         'r' generated, sent again after an unknown outcome: there already → done
--   score: '' = due now, else the delayed-set score (the queue's unit)
-- Ids and scores come formatted from the client: number-to-string work is slow in Lua.
-- Messages of priority 0 wait in the delayed set even when due now: due order
-- is their order, and claims lease them from there (see claim.lua).
-- Returns { added, then index, new id for each generated id that was taken }.
-- The delayed set has the plain name other programs use too: check it before
-- any write, since a script that fails half-way leaves its first writes behind.
-- (The braced keys are skyq's own.)
local kind = redis.call('TYPE', delayedKey)['ok']
if kind ~= 'none' and kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE key ' .. delayedKey .. ' holds a ' .. kind .. ', not a zset')
end

local unit = tonumber(ARGV[1])
local count = (#ARGV - 2) / 5
local ids, callers, generated = {}, {}, {}
for i = 1, count do
  local id = ARGV[3 + (i - 1) * 5]
  ids[i] = id
  if ARGV[4 + (i - 1) * 5] == 'g' then
    generated[#generated + 1] = i
  else
    callers[#callers + 1] = i
  end
end

-- Which ids exist already (no record is read for that). A caller id is pending
-- when it is delayed, ready or active, and dead when it is a dead letter. A
-- generated id is checked too, since a counter that went back (an older AOF, a
-- failover to a lagging replica) repeats them: every skyq message has a record.
local skip, renamed = {}, {}
if #generated > 0 then
  local list = {}
  for j = 1, #generated do
    list[j] = ids[generated[j]]
  end
  local taken = bulkRead('HMGET', msgKey, list)
  for j = 1, #generated do
    if taken[j] then
      local i = generated[j]
      ids[i] = freshId()
      renamed[#renamed + 1] = i
      renamed[#renamed + 1] = ids[i]
    end
  end
end
if #callers > 0 then
  local list = {}
  for j = 1, #callers do
    list[j] = ids[callers[j]]
  end
  local delayed = bulkRead('ZMSCORE', delayedKey, list)
  local live = bulkRead('HMGET', dueKey, list)
  local dead = bulkRead('ZMSCORE', deadKey, list)
  local revived = {}
  for j = 1, #callers do
    local caller = ARGV[4 + (callers[j] - 1) * 5] == 'c'
    if delayed[j] or live[j] or (dead[j] and not caller) then
      skip[callers[j]] = true -- pending, or a retried generated id that got in after all
    elseif dead[j] then
      revived[#revived + 1] = list[j]
    end
  end
  if #revived > 0 then
    bulk('ZREM', deadKey, revived)
    forget(revived)
  end
end

local delayed, readyIds, readyDues, records, pris = {}, {}, {}, {}, {}
local now = nil
local dueNow = false
local seen = {}
for i = 1, count do
  local base = 2 + (i - 1) * 5
  local id, score, priority = ids[i], ARGV[base + 3], ARGV[base + 4]
  -- The same id twice in one call: the first one wins, like two calls would.
  if not skip[i] and not seen[id] then
    seen[id] = true
    records[#records + 1] = id
    records[#records + 1] = ARGV[base + 5]
    if priority ~= '0' then
      pris[#pris + 1] = id
      pris[#pris + 1] = priority
    end
    if score ~= '' then
      delayed[#delayed + 1] = score
      delayed[#delayed + 1] = id
    else
      now = now or nowMs()
      dueNow = true
      if priority == '0' then
        delayed[#delayed + 1] = now / unit
        delayed[#delayed + 1] = id
      else
        readyIds[#readyIds + 1] = id
        readyDues[#readyDues + 1] = now
      end
    end
  end
end

if #records > 0 then
  fill(msgKey, records)
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
if dueNow then
  wake()
elseif ARGV[2] ~= '' and #delayed > 0 then
  wakeIfEarlier(tonumber(ARGV[2]))
end
local out = { #records / 2 }
for i = 1, #renamed do
  out[#out + 1] = renamed[i]
end
return out
