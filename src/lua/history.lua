-- history.lua: finished jobs kept for a while, with their results. The loader
-- puts this text after lib.lua, lib-ids.lua and events.lua, in front of each group
-- script.
--
-- A kept job keeps its record where it was in the msg hash (no body is copied;
-- a spilled body over 64 KiB is not kept, see forgetState), and gains:
--   done: zset id → when it finished (ms, Redis clock), oldest first
--   hist: hash id → "<attempts>|<due ms>|<duration ms>|<kind><result>"
--     kind: u none, s string, j JSON, b bytes, t truncated (then its size in bytes)
-- Trimming removes at most a batch plus TRIM_SLACK entries a call, from the
-- oldest: by count beyond the limit and by age; no call walks the history.
-- An id added again loses its entry (and its kept record) in that add (dropHistory):
-- the entry told of the previous run. One pending again all the same (another
-- program's ZADD of a finished member, or format-7 data) is left out of done pages
-- (list.lua), and when trimmed loses its history entry but keeps its record, which
-- belongs to the new message.

local TRIM_SLACK = 10
local NOTHING_KEPT = { count = 0, ageMs = 0 }

-- Retention from an argument: "<count>:<age ms>", or '' when nothing is kept.
local function retentionOf(spec)
  if spec == nil or spec == '' then
    return nil
  end
  local count, age = string.match(spec, '^(%d+):(%d+)$')
  if tonumber(count) == 0 then
    return nil
  end
  return { count = tonumber(count), ageMs = tonumber(age) }
end

-- The history entries of these ids go: each is pending again (added anew, or cancelled
-- while it was), so an entry told of its previous run. Returns the ids that had one.
local function dropHistory(ids)
  if redis.call('EXISTS', doneKey) == 0 then
    return {}
  end
  local had = membersOf(doneKey, ids)
  if #had > 0 then
    bulk('ZREM', doneKey, had)
    bulk('HDEL', histKey, had)
  end
  return had
end

-- Forget the lease state of finished messages, keeping their records. Bodies
-- over 64 KiB (spilled to keys of their own) are not kept: 1,000 of 1 MiB
-- would be a GiB a group. Their stub stays, so get() can say so. Sizes in the
-- big hash go too: claims size their reads by them, and a kept job is not read.
local function forgetState(ids)
  dropBigs(ids)
  bulk('HDEL', dueKey, ids)
  forgetRare(ids)
end

-- The oldest members of a set scored by time, past a count (`excess` of them over it)
-- or older than ageMs (0: no age limit): at most `budget`, taken out of the set.
local function takeOldest(key, excess, ageMs, now, budget)
  local aged = 0
  if ageMs > 0 then
    aged = redis.call('ZCOUNT', key, '-inf', '(' .. (now - ageMs))
  end
  local n = math.min(budget, math.max(excess, aged))
  if n <= 0 then
    return {}
  end
  local old = redis.call('ZRANGE', key, 0, n - 1)
  bulk('ZREM', key, old)
  return old
end

-- Drop the oldest entries past the count or the age: at most `budget` of them.
local function trimHistory(retention, now, budget)
  local excess = redis.call('ZCARD', doneKey) - retention.count
  local old = takeOldest(doneKey, excess, retention.ageMs, now, budget)
  if #old == 0 then
    return 0
  end
  bulk('HDEL', histKey, old)
  -- Records of ids that are pending again (added anew) or dead belong to that message.
  local delayed = bulkRead('ZMSCORE', delayedKey, old)
  local live = bulkRead('HMGET', dueKey, old)
  local dead = redis.call('EXISTS', deadKey) == 1 and bulkRead('ZMSCORE', deadKey, old) or {}
  local gone = {}
  for i = 1, #old do
    if not (delayed[i] or live[i] or dead[i]) then
      gone[#gone + 1] = old[i]
    end
  end
  if #gone > 0 then
    forget(gone, true) -- none of them is leased: live says so
  end
  return #old
end

-- Dead letters past their retention (keepDead, "<count>:<age ms>", 0 no limit of that
-- kind; '' keeps them until purged): forget at most `budget` of the oldest.
local function trimDead(spec, now, budget)
  local count, age = string.match(spec or '', '^(%d+):(%d+)$')
  if not count then
    return 0
  end
  count, age = tonumber(count), tonumber(age)
  local excess = count > 0 and redis.call('ZCARD', deadKey) - count or 0
  local old = takeOldest(deadKey, excess, age, now, budget)
  forget(old) -- returns at once when nothing was taken
  return #old
end

-- Of ids acked without their lease, those still pending: leased by another consumer now, or
-- waiting again after their lease expired. Those are stale. The others are finished already,
-- most often by this very ack sent again after its reply was lost (ioredis resends unanswered
-- commands once it reconnects, and an actor puts acks back for its next poll): nothing to say.
local function stillPending(ids)
  if #ids == 0 then
    return ids
  end
  local leased = bulkRead('HMGET', dueKey, ids)
  local waiting = bulkRead('ZMSCORE', delayedKey, ids)
  local pending = {}
  for i = 1, #ids do
    if leased[i] or waiting[i] then
      pending[#pending + 1] = ids[i]
    end
  end
  return pending
end

-- Ack: finish the messages whose lease the caller still holds. ARGV[first] is
-- the retention ('' keeps nothing), ARGV[first + 1] the events flag (events.lua),
-- ARGV[first + 2] how many lease arguments follow (token, count, ids...), then,
-- when kept, one result per id named: "<duration ms>|<kind><result>", then, with
-- events on, one name per id named ('' none): ack reads no record to learn them.
-- Then, only when some acked ids are flow members, their flow section (flow-lib.lua
-- flow().acked): an ack without one does nothing more for flows.
local function ackLeased(first)
  local retention = retentionOf(ARGV[first])
  setEvents(ARGV[first + 1])
  local leaseEnd = first + 2 + tonumber(ARGV[first + 2])
  local held, stale, dues, positions = leasedBy(first + 3, retention ~= nil and 'text', leaseEnd)
  local named = #held + #stale
  stale = stillPending(stale)
  local now = nowMs()
  local flowAt = leaseEnd + (retention and named or 0) + (eventsOn and named or 0) + 1
  if ARGV[flowAt] then
    local heldAt = {}
    for i = 1, #held do
      heldAt[positions[i]] = held[i]
    end
    flow().acked(flowAt, heldAt, retention ~= nil, now)
  end
  if #held > 0 then
    bulk('ZREM', activeKey, held)
    local names = nil
    if eventsOn then
      local namesAt = leaseEnd + (retention and named or 0)
      names = {}
      for i = 1, #held do
        names[i] = ARGV[namesAt + positions[i]] or ''
      end
    end
    publish('done', held, names, '')
  end
  if not retention then
    if #held > 0 then
      forget(held)
    end
    -- Kept before, by a launcher that kept them: let them go, a few a call.
    trimHistory(NOTHING_KEPT, now, #held + TRIM_SLACK)
    return #held, stale
  end
  if #held > 0 then
    local atts = {}
    if redis.call('EXISTS', attKey) == 1 then
      atts = bulkRead('HMGET', attKey, held)
    end
    local entries, finished = {}, {}
    local nowText = string.format('%d', now)
    for i = 1, #held do
      local attempts = atts[i] and SMALL_TEXT[(tonumber(atts[i]) or 0) + 1] or '1'
      entries[#entries + 1] = held[i]
      entries[#entries + 1] = attempts .. '|' .. dues[i] .. '|' .. (ARGV[leaseEnd + positions[i]] or '0|u')
      finished[#finished + 1] = nowText
      finished[#finished + 1] = held[i]
    end
    forgetState(held)
    fill(histKey, entries)
    bulk('ZADD', doneKey, finished)
  end
  trimHistory(retention, now, #held + TRIM_SLACK)
  return #held, stale
end
