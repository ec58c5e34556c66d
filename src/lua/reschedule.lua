-- reschedule.lua: move a delayed or ready message to a new due time.
-- KEYS: the group's keys (lib.lua); KEYS[24] the schedules hash (schedule-lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] id
-- ARGV[3] when: 'd<delayMs>' or 'a<epochMs>'
-- ARGV[4] events flag ('1' on: events.lua)
-- Returns 1 when moved; 0 when not found, active or dead; -1 when refused: the id is a
-- schedule's pending occurrence and the new due time is after its grid time (and now).
argCount(4)
argEvents(4)
local unit = argUnit(1)
local id = ARGV[2] -- any bytes: a raw member's id is the member
if not string.match(ARGV[3], '^[da]%d+$') or tonumber(string.sub(ARGV[3], 2)) > ARG_MAX then
  refuse(3, "when must be 'd<delay ms>' or 'a<epoch ms>'")
end
local now = nowMs()
local dueMs = tonumber(string.sub(ARGV[3], 2))
if string.sub(ARGV[3], 1, 1) == 'd' then
  dueMs = now + dueMs
end

-- A schedule adds its next occurrence only when a consumer takes the pending one, so pushing
-- that one back held the whole schedule back with it; sooner (run now) keeps the grid.
local function pushesScheduleBack()
  local scheduleId, at = string.match(id, '^schedule:(.+):(%d+)$')
  if not scheduleId then
    return false
  end
  local text = redis.call('HGET', KEYS[24], 's:' .. scheduleId)
  if not text or cjson.decode(text).next ~= tonumber(at) then
    return false -- only looks like one, or no longer the schedule's next
  end
  return dueMs > math.max(tonumber(at), now)
end

local due = false
if redis.call('ZSCORE', delayedKey, id) == false then
  due = redis.call('HGET', dueKey, id)
  if not due or string.find(due, '/', 1, true) then
    return 0
  end
end
if pushesScheduleBack() then
  return -1
end
if due then
  if redis.call('ZREM', readyKey, readyMember(tonumber(due), id)) == 0 then
    return 0
  end
  redis.call('HDEL', dueKey, id)
end
redis.call('ZADD', delayedKey, dueMs / unit, id)
wakeIfEarlier(dueMs)
setEvents(ARGV[4])
if eventsOn then
  publish('rescheduled', { id }, { nameOf(redis.call('HGET', msgKey, id)) }, string.format('%d', dueMs))
end
return 1
