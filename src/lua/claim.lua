-- claim.lua: ack what the caller finished, recover expired leases, and lease up
-- to max due messages: by priority, then due time, then id (see lib.lua for
-- where each waits).
-- The cost follows the batch, never the body sizes or the queue's length.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] most messages to lease
-- ARGV[3] lease length in ms
-- ARGV[4] most messages promoted or recovered in one call
-- ARGV[5] record header for raw members (added without skyq): '|0|<attempts>|<backoff>|'
-- ARGV[6] lookahead ms: leasing straight from the delayed set, also lease
--   messages due within this window; the consumer starts each at its due time
--   with a local timer, so a trickle of due times costs a claim per window
-- ARGV[7] byte budget: stop reading records (and taking long members) past it
-- ARGV[8] claim id, made by the client for this call. The same call sent again
--   (its reply was lost: ioredis resends unanswered commands, and a client
--   retries a failed poll under the same id) answers with what it leased.
-- ARGV[9] claim ids whose replies the client got, comma-separated ('' none)
-- ARGV[10] n: how many names the caller rate-limits (0 none), then ARGV[11..10+2n]
--   for each, the name and how many of its messages this claim may lease (the
--   tokens the caller took for it); the rest are held back (lib-held.lua)
-- ARGV[11+2n..] acks: the retention, the events flag (also for this claim's own
--   started, stale and dead events: events.lua), then the leases acked, their
--   results and names (history.lua ackLeased)
-- Returns { now, nextDueMs, acked, paused, token, staleCount, stale ids...,
--   heldBack, held, then id, record, failedAttempts, dueMs for each leased
--   message }: heldBack is how many this claim held back, held how many of each
--   limited name are held now (comma-separated, in ARGV's order)
-- nextDueMs: now when due messages are left; else the next due time or lease
-- expiry; -1 when nothing is pending or the group is paused.
argCount(13, -1)
local unit, max = argUnit(1), argInt(2, 'most messages to lease', 1, 10000)
local leaseMs = argInt(3, 'lease length in ms', 0)
local limit = argInt(4, 'most messages promoted or recovered', 1, 100000)
local rawHeader = ARGV[5]
if not string.match(rawHeader, '^[0-9a-z]*|%-?%d+|%d+|[fe]%d+%-?%d*|$') then
  refuse(5, "raw members' record header must be '|<priority>|<attempts>|<backoff>|'")
end
local lookahead = argInt(6, 'lookahead in ms', 0, 3600000)
local budget = argInt(7, 'byte budget', 1, 1024 * 1024 * 1024)
local claimId = argText(8, 'claim id')
local receivedIds = ARGV[9]
if receivedIds ~= '' and (string.find(receivedIds, ',,', 1, true) or string.match(receivedIds, '^,')
    or string.match(receivedIds, ',$')) then
  refuse(9, "received claim ids must be comma-separated ids or ''")
end
local limitCount = argInt(10, 'how many limited names follow', 0, 1000)
local acksAt = 11 + 2 * limitCount
local limitNames, grants = {}, {} -- grants: name → how many more of it may be leased
for i = 11, acksAt - 1, 2 do
  limitNames[#limitNames + 1] = argText(i, 'a limited name')
  grants[ARGV[i]] = argInt(i + 1, 'how many of a limited name may be leased', 0, 10000)
end
argAcks(acksAt)
local PAUSED_NEXT = 9e15 -- nobody looks at a paused group before resume wakes one
local now = nowMs()
local nowText = string.format('%d', now)
sweepSpills(now) -- orphan bodies of adds that never ran (lib.lua)

local acked, stale = ackLeased(acksAt)
local heldBack = 0
local function reply(nextDue, paused, token, leased)
  local out = { now, nextDue, acked, paused, token, #stale }
  for i = 1, #stale do
    out[#out + 1] = stale[i]
  end
  out[#out + 1] = heldBack
  out[#out + 1] = heldCounts(limitNames)
  for i = 1, #leased do
    out[#out + 1] = leased[i]
  end
  return out
end

-- 0. The claims remembered for a resend (claim-lib.lua).
forgetClaims(ARGV[9], now)
local earlier = redis.call('HGET', claimedKey, claimId)
if earlier then
  local token, leased = leasedAgain(earlier)
  return reply(now, 0, token, leased)
end

if redis.call('EXISTS', pausedKey) == 1 then
  redis.call('SET', nextKey, PAUSED_NEXT)
  return reply(-1, 1, '', {})
end

-- Only priority 0 pending (no pri hash) and nothing promoted: lease straight
-- from the delayed set, whose order (due time, then id) is then the order.
local plain = not anyPriority()

-- 1. Expired leases: their consumer died or hung. Counted as an attempt; whether
--    that was the last one is decided when they are leased again (that reads
--    the record anyway), so recovering reads no record.
local expired = redis.call('ZRANGEBYSCORE', activeKey, '-inf', now, 'LIMIT', 0, limit)
if #expired > 0 then
  bulk('ZREM', activeKey, expired)
  local dues = bulkRead('HMGET', dueKey, expired)
  local atts = bulkRead('HMGET', attKey, expired)
  local attPairs, errPairs, dueList = {}, {}, {}
  for i = 1, #expired do
    attPairs[#attPairs + 1] = expired[i]
    attPairs[#attPairs + 1] = (tonumber(atts[i]) or 0) + 1
    errPairs[#errPairs + 1] = expired[i]
    errPairs[#errPairs + 1] = 'lease expired'
    dueList[i] = dues[i] and dueOf(dues[i]) or now
  end
  bulk('HSET', attKey, attPairs)
  bulk('HSET', errKey, errPairs)
  requeue(expired, dueList, unit)
  publish('stale', expired, nil, 'lease expired')
end

-- 1b. Held messages (lib-held.lua): of each name the caller limits, as many as it has
--     tokens for (max in all) go back among the ready ones, where the lease below meets
--     them in order. A name it does not limit it does not hold back: all of those go back
--     (up to limit).
local bands, granted, releasable = {}, max, limit
for _, entry in ipairs(heldBands()) do
  local name, band = entry[1], entry[2]
  bands[name] = band
  if grants[name] then
    granted = granted - releaseHeld(band, math.min(grants[name], granted))
  else
    releasable = releasable - releaseHeld(band, releasable)
  end
end

-- 2. What to lease. Plain: the first max of the delayed set due by the lookahead
--    (the consumer starts each at its due time). Otherwise: promote what is due
--    to the ready set, by priority, and take its first max.
local direct = plain and readyCount() == 0
local anyBig = redis.call('HLEN', bigKey) > 1
local candidates, candidateDues
if direct then
  -- With big records about, a batch is likely cut by bytes long before max:
  -- look at fewer candidates (the rest stay due, so the reply says come back now).
  candidates, candidateDues = dueMembers(now + lookahead, anyBig and math.min(max, 64) or max, budget, unit, nowText)
else
  local ids, dues = dueMembers(now, limit, budget, unit, nowText)
  ids, dues = notHeldElsewhere(ids, dues, unit, now) -- nor promoted (claim-lib.lua)
  if #ids > 0 then
    bulk('ZREM', delayedKey, ids)
    toReady(ids, dues)
  end
  candidates, candidateDues = {}, {}
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', readyKey, '-inf', '(' .. BAND, 'LIMIT', 0, max)) do
    candidates[#candidates + 1] = string.sub(member, 12)
    candidateDues[#candidateDues + 1] = tonumber(string.sub(member, 1, 11), 16)
  end
end

-- Members named like skyq's placeholders become dead letters, never leases (claim-lib.lua).
deadPlaceholders(candidates, candidateDues, direct, now)

-- 3. Lease: the records, within the byte budget (claim-lib.lua), then the leases.
local recs, taken = readRecords(candidates, anyBig, budget)
if direct then
  -- Not an id that runs already (another program ZADDed it again): claim-lib.lua.
  candidates, candidateDues, recs, taken = notHeldElsewhere(candidates, candidateDues, unit, now, recs, taken)
end

local leased, token = {}, ''
if taken > 0 then
  local takenIds = candidates
  if taken < #candidates then
    takenIds = {}
    for i = 1, taken do
      takenIds[i] = candidates[i]
    end
  end
  if direct then
    bulk('ZREM', delayedKey, takenIds)
  else
    local members = {}
    for i = 1, taken do
      members[i] = readyMember(candidateDues[i], candidates[i])
    end
    bulk('ZREM', readyKey, members)
  end
  local atts = {}
  if redis.call('EXISTS', attKey) == 1 then
    atts = bulkRead('HMGET', attKey, takenIds)
    reviveDead(takenIds, atts) -- a dead letter's id ZADDed again runs anew (claim-lib.lua)
  end
  token = redis.call('INCR', tokKey) .. '.' .. redis.call('TIME')[2]
  local expiry = now + leaseMs
  local expiryText = string.format('%d', expiry)
  local active, leases, raws, dead, reasons, deadNames = {}, {}, {}, {}, {}, {}
  local heldIds, heldDues, heldNames = {}, {}, {}
  for i = 1, taken do
    local id, rec, att = takenIds[i], recs[i], tonumber(atts[i]) or 0
    if not rec then
      -- A member some other program added: its text is the body. Keep a header-only record.
      rec = rawHeader .. 'r'
      raws[#raws + 1] = id
      raws[#raws + 1] = rec
    end
    local maxAttempts = att > 0 and maxAttemptsOf(rec)
    local name = limitCount > 0 and nameOf(rec)
    local grant = name and grants[name] -- nil: its name is not limited
    if maxAttempts and att >= maxAttempts then
      dead[#dead + 1] = now
      dead[#dead + 1] = id
      reasons[#reasons + 1] = id
      reasons[#reasons + 1] = lastAttemptReason(id, maxAttempts) -- its lease ran out, or its thread died
      deadNames[#deadNames + 1] = nameOf(rec)
      flow().recordDied(id, rec, reasons[#reasons], now) -- a flow child's parent learns it
    elseif grant and grant <= 0 then
      -- No token left for its name: held back, in its order (lib-held.lua).
      heldIds[#heldIds + 1] = id
      heldDues[#heldDues + 1] = candidateDues[i]
      heldNames[#heldNames + 1] = name
    else
      if grant then
        grants[name] = grant - 1
      end
      active[#active + 1] = expiryText
      active[#active + 1] = id
      leases[#leases + 1] = id
      leases[#leases + 1] = candidateDues[i] .. '/' .. token
      leased[#leased + 1] = id
      leased[#leased + 1] = rec
      leased[#leased + 1] = att
      leased[#leased + 1] = candidateDues[i]
    end
  end
  if #raws > 0 then
    fill(msgKey, raws)
  end
  if #heldIds > 0 then
    holdBack(bands, heldIds, heldDues, heldNames)
    heldBack = #heldIds
  end
  if #active > 0 then
    redis.call('ZADD', activeKey, '+inf', KEEP_MEMBER)
    bulk('ZADD', activeKey, active)
    fill(dueKey, leases)
    rememberClaim(claimId, token, expiry, leases)
  end
  if #dead > 0 then
    local deadIds = {}
    for i = 2, #dead, 2 do
      deadIds[#deadIds + 1] = dead[i]
    end
    bulk('ZADD', deadKey, dead)
    bulk('HSET', reasonKey, reasons)
    bulk('HDEL', dueKey, deadIds)
    -- An event's meta is its reason: those whose thread died (lastAttemptReason) go one by one.
    local expired, expiredNames = {}, {}
    for i = 1, #deadIds do
      if string.sub(reasons[2 * i], 1, 14) == 'lease expired ' then
        expired[#expired + 1] = deadIds[i]
        expiredNames[#expiredNames + 1] = deadNames[i]
      else
        publish('dead', { deadIds[i] }, eventsOn and { deadNames[i] } or nil, reasons[2 * i])
      end
    end
    publish('dead', expired, eventsOn and expiredNames or nil, 'lease expired on the last attempt')
  end
  if eventsOn and #leased > 0 then
    local ids, names = {}, {}
    for i = 1, #leased, 4 do
      ids[#ids + 1] = leased[i]
      names[#names + 1] = nameOf(leased[i + 1])
    end
    publish('started', ids, names, '')
  end
end

-- 4. More waiting than taken: now, and wake a sibling. Otherwise the next due
--    time or lease expiry; `next` tells producers when we will look anyway.
local nextDue = -1
local head = redis.call('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
if head[2] then
  nextDue = msOfScore(head[2], unit)
end
if readyCount() > 0 or (nextDue ~= -1 and nextDue <= now) then
  nextDue = now
  wake()
else
  local lease = redis.call('ZRANGE', activeKey, 0, 0, 'WITHSCORES')
  if lease[2] and lease[1] ~= KEEP_MEMBER and (nextDue == -1 or tonumber(lease[2]) < nextDue) then
    nextDue = tonumber(lease[2])
  end
end
-- Held messages: somebody looks again soon, a launcher that does not limit their name too.
if forgetEmptyBands(bands) and (nextDue == -1 or nextDue > now + HELD_RECHECK_MS) then
  nextDue = now + HELD_RECHECK_MS
  wake(nextDue)
end
if nextDue == -1 then
  redis.call('DEL', nextKey)
else
  redis.call('SET', nextKey, nextDue)
end
return reply(nextDue, 0, token, leased)
