-- schedule-lib.lua: helpers of the schedule scripts, put after lib.lua in front of each
-- schedule-*.lua (src/redis/scripts.ts). A schedule lives in one group's slot: its state
-- and record template in the schedules hash, its next occurrence an ordinary message of
-- the group, so one script call changes both.
-- Schedules hash (`{prefix:g}:schedules`, KEYS[24], see src/base/keys.ts), per schedule id:
--   s:<id> its state, JSON (src/queue/schedules/spec.ts ScheduleState): spec, digest,
--     next (grid ms of the pending occurrence; absent when none), last, count
--   h:<id> the occurrence record's head: header and name tag (src/queue/record.ts)
--   t:<id> its tail: kind letter and body
-- An occurrence's id is `schedule:<id>:<at ms>`; its record carries the tag
-- `p<bytes>:<at ms>:<id>` between head and tail, which is how a consumer knows it.
local schedulesKey = KEYS[24]

local function occurrenceId(id, at)
  return 'schedule:' .. id .. ':' .. string.format('%d', at)
end

-- Adds the occurrence of schedule `id` at grid time `at` (ms), due then, unless it is
-- pending already. A dead letter of that id is replaced, as add.lua replaces caller ids.
local function addOccurrence(id, at, unit, priority)
  local occ = occurrenceId(id, at)
  if redis.call('ZSCORE', delayedKey, occ) or redis.call('HEXISTS', dueKey, occ) == 1 then
    return occ
  end
  if redis.call('ZSCORE', deadKey, occ) then
    redis.call('ZREM', deadKey, occ)
    forget({ occ })
  end
  local tag = string.format('%d', at) .. ':' .. id
  local rec = redis.call('HGET', schedulesKey, 'h:' .. id) .. 'p' .. #tag .. ':' .. tag
    .. redis.call('HGET', schedulesKey, 't:' .. id)
  fill(msgKey, { occ, rec })
  keepPreviews({ occ, rec })
  if #rec > BIG_RECORD then
    fill(bigKey, { occ, #rec })
  end
  if priority ~= 0 then
    fill(priKey, { occ, priority })
  end
  redis.call('ZADD', delayedKey, at / unit, occ)
  wakeIfEarlier(at)
  return occ
end

-- Removes an occurrence that is still waiting (delayed or ready), as cancel.lua does, and
-- tells its waiters (a cancelled event, always published); one that is leased runs to its
-- end. Returns 1 when it was removed.
local function cancelWaiting(occ)
  if redis.call('ZREM', delayedKey, occ) == 0 then
    local due = redis.call('HGET', dueKey, occ)
    if not due or string.find(due, '/', 1, true) then
      return 0
    end
    if redis.call('ZREM', readyKey, readyMember(tonumber(due), occ)) == 0 then
      return 0
    end
  end
  publish('cancelled', { occ }, nil, '')
  forget({ occ })
  return 1
end
