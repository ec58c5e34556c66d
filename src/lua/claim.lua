-- claim.lua: ack what the caller finished, then recover expired leases,
-- promote due messages, and lease up to max ready ones by priority then age.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: milliseconds per delayed-set score unit
-- ARGV[2] max messages to lease
-- ARGV[3] lease length in ms
-- ARGV[4] most messages promoted or recovered in one call (bounds script time)
-- ARGV[5] record header for raw members (added without skyq): '|0|<attempts>|<backoff>|s'
-- ARGV[6..] ids to ack first (optional)
-- Returns { now, nextDueMs or -1, acked, id, record, failedAttempts, dueMs, ... }
-- nextDueMs is now when ready messages are left, else the next due time or
-- lease expiry, -1 when the group holds nothing pending.
local unit = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local leaseMs = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local rawHeader = ARGV[5]
local now = nowMs()

local acked = 0
if #ARGV > 5 then
  acked = ackLeased(argvFrom(6))
end

local seq = nil
local function nextSeq()
  if seq == nil then
    -- Reserve a block at once: one INCRBY per call, not per message.
    seq = redis.call('INCRBY', seqKey, limit * 2) - limit * 2
  end
  seq = seq + 1
  return seq
end

local ready, deadPairs, reasons, errors = {}, {}, {}, {}
local function toDead(id, reason)
  deadPairs[#deadPairs + 1] = now
  deadPairs[#deadPairs + 1] = id
  reasons[#reasons + 1] = id
  reasons[#reasons + 1] = reason
end

-- 1. Expired leases: their consumer died or hung. Counted as an attempt.
local expired = redis.call('ZRANGEBYSCORE', activeKey, '-inf', now, 'LIMIT', 0, limit)
if #expired > 0 then
  bulk('ZREM', activeKey, expired)
  local recs = bulkRead('HMGET', msgKey, expired)
  local atts = bulkRead('HMGET', attKey, expired)
  local attPairs = {}
  for i = 1, #expired do
    local id = expired[i]
    if recs[i] then
      local attempts = (tonumber(atts[i]) or 0) + 1
      attPairs[#attPairs + 1] = id
      attPairs[#attPairs + 1] = attempts
      errors[#errors + 1] = id
      errors[#errors + 1] = 'lease expired'
      local priority, maxAttempts = parseHeader(recs[i])
      if priority == nil then
        toDead(id, 'malformed record')
      elseif attempts >= maxAttempts then
        toDead(id, 'lease expired on the last of ' .. maxAttempts .. ' attempts')
      else
        ready[#ready + 1] = readyScore(priority, nextSeq())
        ready[#ready + 1] = id
      end
    end
  end
  if #attPairs > 0 then
    bulk('HSET', attKey, attPairs)
  end
end

-- 2. Promote due messages from the delayed set into the ready set.
local due = redis.call('ZRANGEBYSCORE', delayedKey, '-inf', num(now / unit), 'WITHSCORES', 'LIMIT', 0, limit)
if #due > 0 then
  local ids, dues = {}, {}
  for i = 1, #due, 2 do
    ids[#ids + 1] = due[i]
    dues[#dues + 1] = due[i]
    dues[#dues + 1] = num(math.floor(tonumber(due[i + 1]) * unit + 0.5))
  end
  bulk('ZREM', delayedKey, ids)
  local recs = bulkRead('HMGET', msgKey, ids)
  local rawRecords = {}
  for i = 1, #ids do
    local rec = recs[i]
    if not rec then
      -- A member some other client added: its text is the body.
      rec = rawHeader .. ids[i]
      rawRecords[#rawRecords + 1] = ids[i]
      rawRecords[#rawRecords + 1] = rec
    end
    local priority = parseHeader(rec)
    if priority == nil then
      toDead(ids[i], 'malformed record')
    else
      ready[#ready + 1] = readyScore(priority, nextSeq())
      ready[#ready + 1] = ids[i]
    end
  end
  if #rawRecords > 0 then
    bulk('HSET', msgKey, rawRecords)
  end
  bulk('HSET', dueKey, dues)
end
if #ready > 0 then
  bulk('ZADD', readyKey, ready)
end
if #deadPairs > 0 then
  bulk('ZADD', deadKey, deadPairs)
  bulk('HSET', reasonKey, reasons)
end
if #errors > 0 then
  bulk('HSET', errKey, errors)
end

-- 3. Lease up to max ready messages, lowest score first.
local out = { now, -1, acked }
local popped = redis.call('ZPOPMIN', readyKey, max)
if #popped > 0 then
  local ids = {}
  for i = 1, #popped, 2 do
    ids[#ids + 1] = popped[i]
  end
  local recs = bulkRead('HMGET', msgKey, ids)
  local atts = bulkRead('HMGET', attKey, ids)
  local dues = bulkRead('HMGET', dueKey, ids)
  local leases = {}
  local expiry = num(now + leaseMs)
  for i = 1, #ids do
    if recs[i] then
      leases[#leases + 1] = expiry
      leases[#leases + 1] = ids[i]
      out[#out + 1] = ids[i]
      out[#out + 1] = recs[i]
      out[#out + 1] = atts[i] or '0'
      out[#out + 1] = dues[i] or num(now)
    end
  end
  if #leases > 0 then
    bulk('ZADD', activeKey, leases)
  end
end

-- 4. More ready than taken: wake a sibling consumer. Ready set empty: say
--    when the next message falls due or the next lease expires.
if redis.call('ZCARD', readyKey) > 0 then
  wake()
  out[2] = now
else
  local nextDue = -1
  local head = redis.call('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
  if head[2] then
    nextDue = math.floor(tonumber(head[2]) * unit + 0.5)
  end
  local lease = redis.call('ZRANGE', activeKey, 0, 0, 'WITHSCORES')
  if lease[2] and (nextDue == -1 or tonumber(lease[2]) < nextDue) then
    nextDue = tonumber(lease[2])
  end
  out[2] = nextDue
end
return out
