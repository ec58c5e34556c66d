-- counts.lua (read only): how many messages sit in each state of one group.
-- KEYS: the group's keys (lib.lua)
-- ARGV: none
-- Returns { delayed, ready, active, dead, paused (0 or 1) }
return {
  redis.call('ZCARD', delayedKey),
  redis.call('ZCARD', readyKey),
  redis.call('ZCARD', activeKey),
  redis.call('ZCARD', deadKey),
  redis.call('EXISTS', pausedKey),
}
