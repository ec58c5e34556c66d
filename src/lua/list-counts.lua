-- list-counts.lua (read only): how many messages of one group queue.list would
-- show in each state (the dashboard's tabs). O(log n): ZCARD and ZCOUNT only.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] the kept history's age limit in ms (0 none): older entries the
--   trimming has not reached yet are not counted, as list.lua skips them
-- Returns { delayed, ready, active, done, dead, waiting }: ready counts the due ones
-- waiting in the delayed set too (priority 0 ones wait there).
argCount(2)
argUnit(1)
argInt(2, "the kept history's age limit in ms", 0)
local now = nowMs()
local dueWaiting = redis.call('ZCOUNT', delayedKey, '-inf', now / tonumber(ARGV[1]))
local ageMs = tonumber(ARGV[2]) or 0
local done = redis.call('ZCARD', doneKey)
if ageMs > 0 then
  done = done - redis.call('ZCOUNT', doneKey, '-inf', '(' .. (now - ageMs))
end
return {
  redis.call('ZCARD', delayedKey) - dueWaiting,
  redis.call('ZCARD', readyKey) + dueWaiting,
  activeCount(),
  done,
  redis.call('ZCARD', deadKey),
  redis.call('ZCARD', waitingKey), -- flow parents waiting for their children (flow-lib.lua)
}
