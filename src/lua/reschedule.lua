-- reschedule.lua: move a delayed or ready message to a new due time.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: milliseconds per delayed-set score unit
-- ARGV[2] id
-- ARGV[3] when: 'd<delayMs>' or 'a<epochMs>'
-- Returns 1 when moved; 0 when not found, active or dead.
local unit = tonumber(ARGV[1])
local id = ARGV[2]
local when = ARGV[3]
if redis.call('ZSCORE', delayedKey, id) == false then
  if redis.call('ZREM', readyKey, id) == 0 then
    return 0
  end
  redis.call('HDEL', dueKey, id)
end
local now = nowMs()
local dueMs = tonumber(string.sub(when, 2))
if string.sub(when, 1, 1) == 'd' then
  dueMs = now + dueMs
end
wakeIfEarlier(dueMs / unit)
redis.call('ZADD', delayedKey, num(dueMs / unit), id)
return 1
