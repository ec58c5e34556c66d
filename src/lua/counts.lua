-- counts.lua (read only): how many messages sit in each state of one group.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- Returns { delayed, ready, active, dead, paused (0 or 1) }: ready counts the
-- due ones waiting in the delayed set too (priority 0 ones wait there).
argCount(1)
argUnit(1)
local dueWaiting = redis.call('ZCOUNT', delayedKey, '-inf', nowMs() / tonumber(ARGV[1]))
return {
  redis.call('ZCARD', delayedKey) - dueWaiting,
  redis.call('ZCARD', readyKey) + dueWaiting,
  activeCount(),
  redis.call('ZCARD', deadKey),
  redis.call('EXISTS', pausedKey),
}
