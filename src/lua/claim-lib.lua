-- claim-lib.lua: claim.lua's own helpers (the loader puts this after lib.lua and
-- lib-held.lua in front of claim.lua only): the batches remembered for a resend, the due
-- members of the delayed set, those whose id is leased or ready already, dead letters' ids added
-- again, members named like skyq's placeholders, and why a message leased after its last
-- attempt is a dead letter.

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

-- Forget the remembered claims whose reply arrived (`received`: their ids, comma-separated,
-- '' none) and some whose leases ran out (a consumer that never asked again).
local function forgetClaims(received, now)
  if received ~= '' then
    local ids = {}
    for id in string.gmatch(received, '[^,]+') do
      ids[#ids + 1] = id
    end
    bulk('HDEL', claimedKey, ids)
    bulk('ZREM', claimsKey, ids)
  end
  local lapsed = redis.call('ZRANGEBYSCORE', claimsKey, '-inf', now, 'LIMIT', 0, 10)
  if #lapsed > 0 then
    bulk('HDEL', claimedKey, lapsed)
    bulk('ZREM', claimsKey, lapsed)
  end
end

-- The first `count` members of the delayed set due by `horizon` (ms), and their due ms, as
-- far as `budget` bytes of members go.
local function dueMembers(horizon, count, budget, unit, nowText)
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

-- Due members of the delayed set whose id skyq holds elsewhere already: another program ZADDed
-- an id that is leased (its due-hash entry is "<due>/<token>") or waits in the ready set (held
-- back by a rate limit, or put back there). Leasing it would run the id twice at once, and the
-- second lease's token would make the first run's ack stale; promoting it would overwrite the
-- lease's entry. So a leased one stays in the delayed set until its run has ended, due again a
-- second from now (a due member no claim can take would make every reply say "come back now");
-- then it runs once more: an ack leaves it as it is, a retry or a lease that ran out puts the id
-- back under the same member (requeue, fail.lua), once. One waiting in the ready set is the same
-- message: this copy goes (two ZADDs of a member are one member too). One HMGET for the batch,
-- none while nothing is leased or ready. Returns the other ids and dues, in order.
--
-- Given `recs` (the plain path, once the first `taken` records are read), it asks only of the
-- members whose record is a raw one (header-only, ending in 'r': made at a raw member's first
-- claim), since skyq's own adds never put an id that is pending (leased included) in the delayed
-- set again (add.lua), and a raw member that runs has that record. A claim of skyq's messages then
-- reads nothing more for it, where an HMGET of its whole batch cost ~6 % of the claim's Redis time
-- per message (docs/BENCHMARKS.md); a body that ends in 'r' is asked about for nothing. Returns
-- then the first `taken` ids, their dues and records without those, and how many are left.
-- (One local for both: claim.lua's main function is one short of Lua's 200 locals.)
local function notHeldElsewhere(ids, dues, unit, now, recs, taken)
  if recs then
    local rawIds, rawDues = {}, {}
    for i = 1, taken do
      if recs[i] and string.byte(recs[i], -1) == 114 then -- 'r'
        rawIds[#rawIds + 1] = ids[i]
        rawDues[#rawDues + 1] = dues[i]
      end
    end
    local kept = notHeldElsewhere(rawIds, rawDues, unit, now)
    if #kept == #rawIds then
      return ids, dues, recs, taken
    end
    local held = {}
    for _, id in ipairs(rawIds) do
      held[id] = true
    end
    for _, id in ipairs(kept) do
      held[id] = nil
    end
    local outIds, outDues, outRecs = {}, {}, {}
    for i = 1, taken do
      if not held[ids[i]] then
        outIds[#outIds + 1] = ids[i]
        outDues[#outDues + 1] = dues[i]
        outRecs[#outRecs + 1] = recs[i]
      end
    end
    return outIds, outDues, outRecs, #outIds
  end
  if #ids == 0 or redis.call('HLEN', dueKey) <= 1 then -- only KEEP_FIELD, or nothing
    return ids, dues
  end
  local values = bulkRead('HMGET', dueKey, ids)
  local keptIds, keptDues, later, merged = {}, {}, {}, {}
  for i = 1, #ids do
    local id, value = ids[i], values[i]
    -- (KEEP_FIELD's value is the hash's own: deadPlaceholders makes that member a dead letter.)
    if not value or id == KEEP_FIELD then
      keptIds[#keptIds + 1] = id
      keptDues[#keptDues + 1] = dues[i]
    elseif string.find(value, '/', 1, true) then
      later[#later + 1] = math.max(tonumber(dues[i]), now + 1000) / unit
      later[#later + 1] = id
    else
      merged[#merged + 1] = id
    end
  end
  if #keptIds == #ids then
    return ids, dues
  end
  if #later > 0 then
    bulk('ZADD', delayedKey, later)
  end
  if #merged > 0 then
    bulk('ZREM', delayedKey, merged)
  end
  return keptIds, keptDues
end

-- Taken ids that are dead letters: another program ZADDed a dead letter's id (perhaps while it
-- ran, and that run died: notHeldElsewhere). Leased as it was, its attempts used up would kill
-- it again at once, with a reason of a lease run out; with some left it would be leased and
-- dead at once, and its ack would leave a dead letter without its record. As add.lua does with
-- a dead id added again, the new message takes the dead letter's place: out of the dead set,
-- its attempts, error and reason gone (as dead-retry.lua does, a flow parent's end mark too),
-- its record the one kept. Every death counts a failed attempt (fail.lua, or a lease run out),
-- so only ids with some are looked up: one ZMSCORE, and none while no taken id has failed.
-- `atts`: the taken ids' failed attempts (HMGET), set to false for those revived.
local function reviveDead(ids, atts)
  if redis.call('EXISTS', deadKey) == 0 then
    return
  end
  local failed, at = {}, {}
  for i = 1, #ids do
    if tonumber(atts[i]) then
      failed[#failed + 1] = ids[i]
      at[#at + 1] = i
    end
  end
  local dead = bulkRead('ZMSCORE', deadKey, failed)
  local revived = {}
  for j = 1, #failed do
    if dead[j] then
      revived[#revived + 1] = failed[j]
      atts[at[j]] = false
    end
  end
  if #revived == 0 then
    return
  end
  bulk('ZREM', deadKey, revived)
  for _, key in ipairs({ attKey, errKey, reasonKey }) do
    bulk('HDEL', key, revived)
  end
  if redis.call('EXISTS', flowEndsKey) == 1 then
    bulk('ZREM', flowEndsKey, revived)
  end
end

-- A member named like the placeholder field of skyq's hashes, or the active set's
-- placeholder (lib.lua), can have no record or lease of its own: it becomes a dead
-- letter, never a lease. Both may be among the candidates: look at every one, from the
-- last. `direct`: they were read from the delayed set (else the ready set).
local function deadPlaceholders(candidates, dues, direct, now)
  for i = #candidates, 1, -1 do
    local name = candidates[i]
    if name == KEEP_FIELD or name == KEEP_MEMBER then
      if direct then
        redis.call('ZREM', delayedKey, name)
      else
        redis.call('ZREM', readyKey, readyMember(dues[i], name))
        if name == KEEP_MEMBER then
          redis.call('HDEL', dueKey, name) -- toReady wrote it; KEEP_FIELD's is the hash's own
        end
      end
      redis.call('ZADD', deadKey, now, name)
      redis.call('HSET', reasonKey, name, name == KEEP_FIELD and "the member is the name of skyq's placeholder field"
        or "the member is the name of the active set's placeholder member")
      table.remove(candidates, i)
      table.remove(dues, i)
    end
  end
end

-- The candidates' records, read in chunks that keep the bytes read within the budget (a
-- record past it ends the batch, unless it is the first): records over BIG_RECORD bytes have
-- their size in the big hash (add.lua), any other is at most that, so a chunk of n others
-- reads at most n × BIG_RECORD. Returns the records and how many candidates they cover.
local function readRecords(candidates, anyBig, budget)
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
  return recs, taken
end

-- Why a message found leased past its last attempt is a dead letter: its last lease ran out,
-- unless its launcher handed it back when the actor thread holding it died (release.lua), whose
-- error says why (src/runtime/hand-back.ts THREAD_DIED): then the dead letter says so too, as
-- "its actor thread died on the last of 3 attempts: hung: no heartbeat for 30000 ms". Read for
-- such messages only, which are few: a claim reads no error otherwise. (Its names stay inside:
-- claim.lua's main function holds 199 locals at its deepest, and Lua refuses more than 200.)
local function lastAttemptReason(id, maxAttempts)
  local died, last = 'its actor thread died', ' on the last of ' .. maxAttempts .. ' attempts'
  local err = redis.call('HGET', errKey, id)
  if err and string.sub(err, 1, #died) == died then
    return died .. last .. string.sub(err, #died + 1)
  end
  return 'lease expired' .. last
end
