-- add.lua: add messages to one group.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: milliseconds per delayed-set score unit (1, 10 or 1000)
-- ARGV[2] group number, for generated ids "<group>:<seq36>"
-- then 4 per message: id ('' = generate), when ('d<delayMs>' or 'a<epochMs>'),
--   priority, record (lib.lua layout)
-- Returns the ids in order. A caller id that is still pending (delayed, ready,
-- active) is left as it is; one that is dead is replaced by the new message.
local unit = tonumber(ARGV[1])
local group = ARGV[2]
local now = nowMs()
local count = (#ARGV - 2) / 4

-- Which caller ids are already pending (or repeated inside this call)?
local callerIds = {}
for i = 0, count - 1 do
  local id = ARGV[3 + i * 4]
  if id ~= '' then
    callerIds[#callerIds + 1] = id
  end
end
local skip = {}
local revived = {}
if #callerIds > 0 then
  local recs = bulkRead('HMGET', msgKey, callerIds)
  local dead = bulkRead('ZMSCORE', deadKey, callerIds)
  for i = 1, #callerIds do
    if recs[i] and dead[i] then
      revived[#revived + 1] = callerIds[i]
    elseif recs[i] then
      skip[callerIds[i]] = true
    end
  end
  if #revived > 0 then
    bulk('ZREM', deadKey, revived)
    forget(revived)
  end
end

-- One counter serves generated ids and ready-set order.
local seq = redis.call('INCRBY', seqKey, count) - count

local ids, delayed, ready, records, dues = {}, {}, {}, {}, {}
local earliest = nil
for i = 0, count - 1 do
  local base = 3 + i * 4
  local id, when, priority, record = ARGV[base], ARGV[base + 1], ARGV[base + 2], ARGV[base + 3]
  seq = seq + 1
  if id == '' then
    id = group .. ':' .. base36(seq)
  end
  ids[#ids + 1] = id
  if not skip[id] then
    skip[id] = true
    local dueMs = tonumber(string.sub(when, 2))
    if string.sub(when, 1, 1) == 'd' then
      dueMs = now + dueMs
    end
    records[#records + 1] = id
    records[#records + 1] = record
    if dueMs <= now then
      ready[#ready + 1] = readyScore(tonumber(priority), seq)
      ready[#ready + 1] = id
      dues[#dues + 1] = id
      dues[#dues + 1] = num(dueMs)
    else
      delayed[#delayed + 1] = num(dueMs / unit)
      delayed[#delayed + 1] = id
      if earliest == nil or dueMs < earliest then
        earliest = dueMs
      end
    end
  end
end

-- Signal before adding, so the comparison sees the old head of the set.
if #ready > 0 then
  wake()
elseif earliest then
  wakeIfEarlier(earliest, unit)
end
if #records > 0 then
  bulk('HSET', msgKey, records)
end
if #ready > 0 then
  bulk('ZADD', readyKey, ready)
  bulk('HSET', dueKey, dues)
end
if #delayed > 0 then
  bulk('ZADD', delayedKey, delayed)
end
return ids
