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

-- A claim's batch, kept until its reply is known to have arrived (the next
-- claim says so) or its leases run out: "<token>|" then "<length>:<id>" for each
-- id, so any bytes may be in an id. `leases` is id, due/token pairs.
local function rememberClaim(claimId, token, expiry, leases)
  local parts = { token, '|' }
  for i = 1, #leases, 2 do
    parts[#parts + 1] = SMALL_TEXT[#leases[i]]
    parts[#parts + 1] = ':'
    parts[#parts + 1] = leases[i]
  end
  redis.call('HSET', claimedKey, claimId, table.concat(parts))
  redis.call('ZADD', claimsKey, expiry, claimId)
end

-- The batch a remembered claim leased, as far as those leases still hold:
-- the token and, for each message, id, record, failed attempts, due ms.
local function leasedAgain(remembered)
  local bar = string.find(remembered, '|', 1, true)
  local token, ids, at = string.sub(remembered, 1, bar - 1), {}, bar + 1
  while at <= #remembered do
    local colon = string.find(remembered, ':', at, true)
    local length = tonumber(string.sub(remembered, at, colon - 1))
    ids[#ids + 1] = string.sub(remembered, colon + 1, colon + length)
    at = colon + length + 1
  end
  local leased, suffix = {}, '/' .. token
  if #ids == 0 then
    return token, leased
  end
  local dues = bulkRead('HMGET', dueKey, ids)
  local recs = bulkRead('HMGET', msgKey, ids)
  local atts = bulkRead('HMGET', attKey, ids)
  for i = 1, #ids do
    local value = dues[i]
    if value and recs[i] and string.sub(value, -#suffix) == suffix then
      leased[#leased + 1] = ids[i]
      leased[#leased + 1] = recs[i]
      leased[#leased + 1] = tonumber(atts[i]) or 0
      leased[#leased + 1] = dueOf(value)
    end
  end
  return token, leased
end

-- 0. The claims remembered for a resend: forget the ones whose reply arrived,
--    and those whose leases ran out (a consumer that never asked again).
if ARGV[9] ~= '' then
  local received = {}
  for id in string.gmatch(ARGV[9], '[^,]+') do
    received[#received + 1] = id
  end
  bulk('HDEL', claimedKey, received)
  bulk('ZREM', claimsKey, received)
end
local lapsed = redis.call('ZRANGEBYSCORE', claimsKey, '-inf', now, 'LIMIT', 0, 10)
if #lapsed > 0 then
  bulk('HDEL', claimedKey, lapsed)
  bulk('ZREM', claimsKey, lapsed)
end
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
local function dueMembers(horizon, count)
  local due = redis.call('ZRANGEBYSCORE', delayedKey, '-inf', horizon / unit, 'WITHSCORES', 'LIMIT', 0, count)
  local ids, dues, memberBytes = {}, {}, 0
  for i = 1, #due, 2 do
    memberBytes = memberBytes + #due[i]
    if memberBytes > budget and #ids > 0 then
      break -- members can be long (raw ones): the rest waits for the next call
    end
    ids[#ids + 1] = due[i]
    -- In ms a whole positive score is the due time as Redis wrote it: no number to format back.
    local score = due[i + 1]
    -- (Redis writes a whole score without leading zeros: "0" is the only one of them ≤ 0.)
    local dueMs = (unit == 1 and string.find(score, '^%d+$')) and score or msOfScore(score, unit)
    -- A score of 0 or below (`ZADD task_group:8 -5 x`) says "at once", not a time in 1970:
    -- the member is due from the claim that first sees it, so its lateness counts from then.
    if dueMs == '0' or dueMs == 0 then
      dueMs = nowText
    end
    dues[#dues + 1] = dueMs
  end
  return ids, dues
end
local direct = plain and readyCount() == 0
local anyBig = redis.call('HLEN', bigKey) > 1
local candidates, candidateDues
if direct then
  -- With big records about, a batch is likely cut by bytes long before max:
  -- look at fewer candidates (the rest stay due, so the reply says come back now).
  candidates, candidateDues = dueMembers(now + lookahead, anyBig and math.min(max, 64) or max)
else
  local ids, dues = dueMembers(now, limit)
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

-- A member named like the placeholder field of skyq's hashes, or the active set's
-- placeholder (lib.lua), can have no record or lease of its own: it becomes a dead
-- letter, never a lease.
-- Both may be among the candidates: look at every one, from the last.
for i = #candidates, 1, -1 do
  local name = candidates[i]
  if name == KEEP_FIELD or name == KEEP_MEMBER then
    if direct then
      redis.call('ZREM', delayedKey, name)
    else
      redis.call('ZREM', readyKey, readyMember(candidateDues[i], name))
      if name == KEEP_MEMBER then
        redis.call('HDEL', dueKey, name) -- toReady wrote it; KEEP_FIELD's is the hash's own
      end
    end
    redis.call('ZADD', deadKey, now, name)
    redis.call('HSET', reasonKey, name, name == KEEP_FIELD and "the member is the name of skyq's placeholder field"
      or "the member is the name of the active set's placeholder member")
    table.remove(candidates, i)
    table.remove(candidateDues, i)
  end
end

-- 3. Lease. Records are read in chunks that keep the bytes read within the
--    budget (a record past it ends the batch, unless it is the first): records
--    over BIG_RECORD bytes have their size in the big hash (add.lua), any other
--    is at most that, so a chunk of n others reads at most n × BIG_RECORD.
local sizes = anyBig and bulkRead('HMGET', bigKey, candidates) or nil
local recs, taken, bytes = {}, 0, 0
-- (A spilled record's value is "<bytes>/<nonce>": its bytes are read after the
-- claim, by the client, but they count all the same.)
local function sizeAt(i)
  return sizes and sizes[i] and tonumber(string.match(sizes[i], '^%d+'))
end
while taken < #candidates do
  local known = sizeAt(taken + 1)
  local last = taken + 1
  if taken > 0 and bytes + (known or BIG_RECORD) > budget then
    break
  end
  if not known then
    -- Up to the next big one, as many as the rest of the budget holds.
    local room = math.floor((budget - bytes) / BIG_RECORD)
    local stop = math.min(#candidates, taken + math.max(1, math.min(256, room)))
    while last < stop and not (sizes and sizes[last + 1]) do
      last = last + 1
    end
  end
  local part = redis.call('HMGET', msgKey, unpack(candidates, taken + 1, last))
  for j = 1, #part do
    recs[taken + j] = part[j]
    bytes = bytes + (known or (part[j] and #part[j]) or #candidates[taken + j])
  end
  taken = last
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
      reasons[#reasons + 1] = 'lease expired on the last of ' .. maxAttempts .. ' attempts'
      deadNames[#deadNames + 1] = nameOf(rec)
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
    publish('dead', deadIds, eventsOn and deadNames or nil, 'lease expired on the last attempt')
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
