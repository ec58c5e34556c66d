-- add.lua: add messages to one group.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] '1' when some ids are the caller's own (check them for duplicates)
-- ARGV[2] earliest score among the delayed ones, '' when none
-- then 4 per message: id, score ('' = ready now; else the delayed-set score,
--   due time in the queue's unit), priority, record (lib.lua layout)
-- Ids are made by the client from blocks it reserved on the seq key, and
-- scores are formatted by the client: number-to-string work is slow in Lua.
-- Returns the number of messages added. A caller id that is still pending
-- (delayed, ready, active) is left as it is; a dead one is replaced.
local count = (#ARGV - 2) / 4

local skip = nil
if ARGV[1] == '1' then
  skip = {}
  local ids = {}
  for i = 0, count - 1 do
    ids[#ids + 1] = ARGV[3 + i * 4]
  end
  local recs = bulkRead('HMGET', msgKey, ids)
  local dead = bulkRead('ZMSCORE', deadKey, ids)
  local revived = {}
  for i = 1, #ids do
    if recs[i] and dead[i] then
      revived[#revived + 1] = ids[i]
    elseif recs[i] then
      skip[ids[i]] = true
    end
  end
  if #revived > 0 then
    bulk('ZREM', deadKey, revived)
    forget(revived)
  end
end

local delayed, ready, records, dues = {}, {}, {}, {}
local now = nil
local seq = nil
for i = 0, count - 1 do
  local base = 3 + i * 4
  local id, score = ARGV[base], ARGV[base + 1]
  if skip == nil or not skip[id] then
    if skip then
      skip[id] = true
    end
    records[#records + 1] = id
    records[#records + 1] = ARGV[base + 3]
    if score == '' then
      if now == nil then
        now = num(nowMs())
        seq = redis.call('INCRBY', seqKey, count) - count
      end
      seq = seq + 1
      ready[#ready + 1] = readyScore(tonumber(ARGV[base + 2]), seq)
      ready[#ready + 1] = id
      dues[#dues + 1] = id
      dues[#dues + 1] = now
    else
      delayed[#delayed + 1] = score
      delayed[#delayed + 1] = id
    end
  end
end

-- Signal before adding, so the comparison sees the old head of the set.
if #ready > 0 then
  wake()
elseif ARGV[2] ~= '' and #delayed > 0 then
  wakeIfEarlier(tonumber(ARGV[2]))
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
return #records / 2
