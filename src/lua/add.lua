-- add.lua: add messages to one group.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] earliest due ms among the delayed ones, '' when none
-- then 5 per message: id, kind, score, priority, record
--   kind: 'c' the caller's id: still pending → left as it is; dead → replaced
--         'g' generated: taken already (counter went back) → a fresh one
--         'r' generated, sent again after an unknown outcome: there already → done
--   score: '' = due now (ready set), else the delayed-set score (the queue's unit)
-- Ids and scores come formatted from the client: number-to-string work is slow in Lua.
-- Returns { added, then index, new id for each generated id that was taken }.
for _, check in ipairs({
  { delayedKey, 'zset' }, { readyKey, 'zset' }, { msgKey, 'hash' }, { dueKey, 'hash' },
  { priKey, 'hash' },
}) do
  local kind = redis.call('TYPE', check[1])['ok']
  if kind ~= 'none' and kind ~= check[2] then
    -- Checked before any write: a script that fails half-way leaves its first writes behind.
    return redis.error_reply('WRONGTYPE key ' .. check[1] .. ' holds a ' .. kind .. ', not a ' .. check[2])
  end
end

local count = (#ARGV - 1) / 5
local ids = {}
for i = 0, count - 1 do
  ids[#ids + 1] = ARGV[2 + i * 5]
end

-- Which ids exist already, and in which state (no record is read). Every id
-- is checked: caller ids for duplicates, generated ones because a counter
-- that went back (older AOF, failover to a lagging replica) repeats them.
local skip, renamed = {}, {}
do
  local delayed = bulkRead('ZMSCORE', delayedKey, ids)
  local live = bulkRead('HMGET', dueKey, ids)
  local dead = bulkRead('ZMSCORE', deadKey, ids)
  local revived = {}
  for i = 1, count do
    local kind = ARGV[3 + (i - 1) * 5]
    local exists = delayed[i] or live[i] or dead[i]
    if exists and kind == 'c' and dead[i] and not delayed[i] and not live[i] then
      revived[#revived + 1] = ids[i]
    elseif exists and kind == 'g' then
      ids[i] = freshId()
      renamed[#renamed + 1] = i
      renamed[#renamed + 1] = ids[i]
    elseif exists then
      skip[i] = true
    end
  end
  if #revived > 0 then
    bulk('ZREM', deadKey, revived)
    forget(revived)
  end
end

local delayed, readyIds, readyDues, records, pris = {}, {}, {}, {}, {}
local now = nil
local seen = {}
for i = 1, count do
  local base = 2 + (i - 1) * 5
  local id, score, priority = ids[i], ARGV[base + 2], ARGV[base + 3]
  -- The same id twice in one call: the first one wins, like two calls would.
  if not skip[i] and not seen[id] then
    seen[id] = true
    records[#records + 1] = id
    records[#records + 1] = ARGV[base + 4]
    if priority ~= '0' then
      pris[#pris + 1] = id
      pris[#pris + 1] = priority
    end
    if score == '' then
      now = now or nowMs()
      readyIds[#readyIds + 1] = id
      readyDues[#readyDues + 1] = now
    else
      delayed[#delayed + 1] = score
      delayed[#delayed + 1] = id
    end
  end
end

if #records > 0 then
  bulk('HSET', msgKey, records)
end
if #pris > 0 then
  bulk('HSET', priKey, pris)
end
if #readyIds > 0 then
  toReady(readyIds, readyDues)
  wake()
end
if #delayed > 0 then
  bulk('ZADD', delayedKey, delayed)
  if ARGV[1] ~= '' then
    wakeIfEarlier(tonumber(ARGV[1]))
  end
end
local out = { #records / 2 }
for i = 1, #renamed do
  out[#out + 1] = renamed[i]
end
return out
