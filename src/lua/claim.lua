-- claim.lua: ack what the caller finished, then recover expired leases,
-- promote due messages, and lease up to max ready ones by priority then age.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: milliseconds per delayed-set score unit
-- ARGV[2] max messages to lease
-- ARGV[3] lease length in ms
-- ARGV[4] most messages promoted or recovered in one call (bounds script time)
-- ARGV[5] record header for raw members (added without skyq): '|0|<attempts>|<backoff>|s'
-- ARGV[6] lookahead ms: when nothing is ready, also lease messages due within
--   this window; the consumer starts each at its due time with a local timer,
--   so a trickle of due times costs one claim per window, not one per message
-- ARGV[7..] ids to ack first (optional)
-- Returns { now, nextDueMs, acked, paused, id, record, failedAttempts, dueMs, ... }
-- nextDueMs is now when ready messages are left, else the next due time or
-- lease expiry, -1 when the group holds nothing pending (or is paused: then
-- paused is 1, nothing is leased, and resuming wakes the consumer).
local unit = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local leaseMs = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local rawHeader = ARGV[5]
local lookahead = tonumber(ARGV[6])
local now = nowMs()

local acked = 0
if #ARGV > 6 then
  acked = ackLeased(argvFrom(7))
end
if redis.call('EXISTS', pausedKey) == 1 then
  return { now, -1, acked, 1 }
end

-- Ready order: one INCRBY reserves the sequence numbers a step needs.
local seq = 0
local function reserveSeq(count)
  seq = redis.call('INCRBY', seqKey, count) - count
end
local function nextSeq()
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
  reserveSeq(#expired)
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

-- 2. Due messages leave the delayed set. When nothing else is ready and they
--    all fit in this claim, they are leased straight away (due order is then
--    the order they start in anyway); otherwise they queue in the ready set
--    by priority, then age.
local direct = nil
local horizon = num((now + lookahead) / unit)
local due = redis.call('ZRANGEBYSCORE', delayedKey, '-inf', horizon, 'WITHSCORES', 'LIMIT', 0, limit)
local leaseDirectly = #ready == 0 and #due / 2 <= max and redis.call('ZCARD', readyKey) == 0
if not leaseDirectly and lookahead > 0 then
  -- Going through the ready set: only what is due now.
  for i = 1, #due, 2 do
    if tonumber(due[i + 1]) * unit > now then
      for j = #due, i, -1 do
        due[j] = nil
      end
      break
    end
  end
end
if #due > 0 then
  local ids, dues, dueList = {}, {}, {}
  for i = 1, #due, 2 do
    local dueMs = due[i + 1]
    if unit ~= 1 then
      dueMs = num(math.floor(tonumber(dueMs) * unit + 0.5))
    end
    ids[#ids + 1] = due[i]
    dueList[#dueList + 1] = dueMs
    dues[#dues + 1] = due[i]
    dues[#dues + 1] = dueMs
  end
  bulk('ZREM', delayedKey, ids)
  local recs = bulkRead('HMGET', msgKey, ids)
  local rawRecords = {}
  for i = 1, #ids do
    if not recs[i] then
      -- A member some other client added: its text is the body.
      recs[i] = rawHeader .. ids[i]
      rawRecords[#rawRecords + 1] = ids[i]
      rawRecords[#rawRecords + 1] = recs[i]
    end
  end
  if #rawRecords > 0 then
    bulk('HSET', msgKey, rawRecords)
  end
  bulk('HSET', dueKey, dues)
  if leaseDirectly then
    direct = { ids = ids, recs = recs, dues = dueList }
  else
    reserveSeq(#ids)
    for i = 1, #ids do
      local priority = string.match(recs[i], '^[0-9a-z]*|(%d+)|')
      if priority == nil then
        toDead(ids[i], 'malformed record')
      else
        ready[#ready + 1] = readyScore(tonumber(priority), nextSeq())
        ready[#ready + 1] = ids[i]
      end
    end
  end
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

-- 3. Lease: the direct batch, or up to max ready messages, lowest score first.
local take = direct
if take == nil then
  local popped = redis.call('ZPOPMIN', readyKey, max)
  if #popped > 0 then
    take = { ids = {} }
    for i = 1, #popped, 2 do
      take.ids[#take.ids + 1] = popped[i]
    end
    take.recs = bulkRead('HMGET', msgKey, take.ids)
    take.dues = bulkRead('HMGET', dueKey, take.ids)
  end
end
local out = { now, -1, acked, 0 }
if take then
  local atts = {}
  if redis.call('EXISTS', attKey) == 1 then
    atts = bulkRead('HMGET', attKey, take.ids)
  end
  local leases = {}
  local expiry = num(now + leaseMs)
  for i = 1, #take.ids do
    -- No record: acked or cancelled while queued; nothing to hand out.
    if take.recs[i] then
      leases[#leases + 1] = expiry
      leases[#leases + 1] = take.ids[i]
      out[#out + 1] = take.ids[i]
      out[#out + 1] = take.recs[i]
      out[#out + 1] = atts[i] or '0'
      out[#out + 1] = take.dues[i] or now
    end
  end
  if #leases > 0 then
    bulk('ZADD', activeKey, leases)
  end
end

-- 4. More ready than taken: wake a sibling consumer. Ready set empty: say
--    when the next message falls due or the next lease expires.
if direct == nil and redis.call('ZCARD', readyKey) > 0 then
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
