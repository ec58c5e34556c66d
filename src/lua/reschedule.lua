-- reschedule.lua: move a delayed or ready message to a new due time.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] id
-- ARGV[3] when: 'd<delayMs>' or 'a<epochMs>'
-- ARGV[4] events flag ('1' on: events.lua)
-- Returns 1 when moved; 0 when not found, active or dead.
argCount(4)
argEvents(4)
local unit = argUnit(1)
local id = ARGV[2] -- any bytes: a raw member's id is the member
if not string.match(ARGV[3], '^[da]%d+$') or tonumber(string.sub(ARGV[3], 2)) > ARG_MAX then
  refuse(3, "when must be 'd<delay ms>' or 'a<epoch ms>'")
end
if redis.call('ZSCORE', delayedKey, id) == false then
  local due = redis.call('HGET', dueKey, id)
  if not due or string.find(due, '/', 1, true) then
    return 0
  end
  if redis.call('ZREM', readyKey, readyMember(tonumber(due), id)) == 0 then
    return 0
  end
  redis.call('HDEL', dueKey, id)
end
local dueMs = tonumber(string.sub(ARGV[3], 2))
if string.sub(ARGV[3], 1, 1) == 'd' then
  dueMs = nowMs() + dueMs
end
redis.call('ZADD', delayedKey, dueMs / unit, id)
wakeIfEarlier(dueMs)
setEvents(ARGV[4])
if eventsOn then
  publish('rescheduled', { id }, { nameOf(redis.call('HGET', msgKey, id)) }, string.format('%d', dueMs))
end
return 1
